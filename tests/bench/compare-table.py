#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Draws make bench's side-by-side table of two builds (tests/bench/compare).

Reads the figures of each round of each build, files of lines
"ROW<tab>METRIC<tab>VALUE" (tests/bench/run with BENCH_FIGURES=FILE), and
prints one line per figure (ROW, METRIC), in the order first seen:
the median over the rounds of base and of this, the change in % (this over
base), the spread of each (min-max over its rounds) and a verdict:

  within noise   |median(this) - median(base)| is at most the wider of the
                 two spreads (max - min): the difference lies inside what
                 the rounds of one build already differ by;
  OUTSIDE        it is more (with "higher" or "lower": this against base;
                 every figure of the bench is better lower);
  -              a build has no figure for it (a part skipped or failed).

One round a build has a spread of 0: any difference is then OUTSIDE.

Usage: compare-table.py [--title TEXT] --base FILE... --this FILE...
"""
import statistics
import sys


def read_figures(path):
    """{(row, metric): value} of one round's figures file; a line that is
    not three tab-separated fields ending in a number is skipped."""
    figures = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                continue
            try:
                figures[(parts[0], parts[1])] = float(parts[2])
            except ValueError:
                continue
    return figures


def verdict(base, this):
    """The verdict on two builds' values of one figure over their rounds
    (lists, either may be empty): "within noise", "OUTSIDE (higher)",
    "OUTSIDE (lower)" or "-"."""
    if not base or not this:
        return "-"
    diff = statistics.median(this) - statistics.median(base)
    noise = max(max(base) - min(base), max(this) - min(this))
    if abs(diff) <= noise:
        return "within noise"
    return "OUTSIDE (higher)" if diff > 0 else "OUTSIDE (lower)"


def number(v):
    """A figure as printed: up to 3 decimals, no trailing zeros."""
    text = "%.3f" % v
    text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def spread(values):
    if not values:
        return "-"
    return "%s-%s" % (number(min(values)), number(max(values)))


def change(base, this):
    if not base or not this:
        return "-"
    b, t = statistics.median(base), statistics.median(this)
    if b <= 0:
        return "-"
    return "%+.1f %%" % (100 * (t - b) / b)


def parse_args(argv):
    title, lists, current = "", {"base": [], "this": []}, None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--title" and i + 1 < len(argv):
            title = argv[i + 1]
            i += 2
            continue
        if a in ("--base", "--this"):
            current = a[2:]
        elif current is None:
            sys.exit(__doc__.split("\n\n")[-1].strip())
        else:
            lists[current].append(a)
        i += 1
    if not lists["base"] or not lists["this"]:
        sys.exit(__doc__.split("\n\n")[-1].strip())
    return title, lists["base"], lists["this"]


def main():
    title, base_files, this_files = parse_args(sys.argv[1:])
    rounds = {"base": [read_figures(p) for p in base_files],
              "this": [read_figures(p) for p in this_files]}
    keys = []
    for side in ("base", "this"):
        for figures in rounds[side]:
            keys.extend(k for k in figures if k not in keys)
    head = ("figure", "base", "this", "change", "base spread", "this spread", "verdict")
    lines = []
    for key in keys:
        base = [f[key] for f in rounds["base"] if key in f]
        this = [f[key] for f in rounds["this"] if key in f]
        lines.append(("%s [%s]" % key,
                      number(statistics.median(base)) if base else "-",
                      number(statistics.median(this)) if this else "-",
                      change(base, this), spread(base), spread(this), verdict(base, this)))
    width = max([len(head[0])] + [len(line[0]) for line in lines])
    fmt = "%-" + str(width) + "s %10s %10s %9s %17s %17s  %s"
    print("== cachekeeper bench, side by side%s ==" % (" " + title if title else ""))
    print("medians over %d round(s) of base, %d of this; spread = min-max over a build's rounds; "
          "within noise = |this - base| <= the wider spread" % (len(base_files), len(this_files)))
    print(fmt % head)
    for line in lines:
        print(fmt % line)


if __name__ == "__main__":
    main()
