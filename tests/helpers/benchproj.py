#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A CMake project of many small C and C++ translation units, for the cost
of `cachectl measure` in tests/bench/run (issue 31 item 8): every TU
includes a shared header (common.h: a new value of its BENCH_VERSION
reaches the preprocessed text of every TU, so all miss) and one of a few
group headers; the C++ ones also a
standard header, so each compile reads a realistic number of files. A
static library of them all and one program linking it.

Usage: benchproj.py DIR [C_TUS] [CXX_TUS]   (defaults 200 and 100)"""
import os
import sys

GROUPS = 4


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def main():
    root = sys.argv[1]
    n_c = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    n_cxx = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    os.makedirs(os.path.join(root, "src"), exist_ok=True)
    os.makedirs(os.path.join(root, "include"), exist_ok=True)
    write(os.path.join(root, "include", "common.h"),
          "/* shared by every TU; BENCH_VERSION is in the text of each */\n"
          "#pragma once\n#include <stddef.h>\n#include <stdint.h>\n"
          "#define BENCH_VERSION 1\n"
          "static inline uint32_t bench_mix(uint32_t x) { return x * 2654435761u ^ (x >> 13) ^ BENCH_VERSION; }\n")
    for g in range(GROUPS):
        write(os.path.join(root, "include", f"group{g}.h"),
              f'#pragma once\n#include "common.h"\n#define GROUP{g}_SCALE {g + 3}\n'
              f"struct group{g} {{ int a, b; double c[{g + 2}]; }};\n")
    names = []
    for i in range(n_c):
        g = i % GROUPS
        write(os.path.join(root, "src", f"c{i}.c"),
              f'#include "group{g}.h"\n#include <string.h>\n'
              f"int c{i}(int x) {{\n"
              f"        struct group{g} s;\n        memset(&s, 0, sizeof(s));\n"
              f"        s.a = x * GROUP{g}_SCALE; s.b = (int) bench_mix((uint32_t) x + {i});\n"
              f"        return s.a + s.b + BENCH_VERSION;\n}}\n")
        names.append(f"src/c{i}.c")
    for i in range(n_cxx):
        g = i % GROUPS
        write(os.path.join(root, "src", f"x{i}.cpp"),
              f'extern "C" {{\n#include "group{g}.h"\n}}\n#include <array>\n#include <numeric>\n'
              f'extern "C" int x{i}(int x) {{\n'
              f"        std::array<int, {i % 7 + 2}> v{{}};\n"
              f"        for (auto &e : v) e = (int) bench_mix((uint32_t) (x + {i}));\n"
              f"        return std::accumulate(v.begin(), v.end(), GROUP{g}_SCALE);\n}}\n")
        names.append(f"src/x{i}.cpp")
    decls = "".join(f"int c{i}(int);\n" for i in range(n_c)) + "".join(f"int x{i}(int);\n" for i in range(n_cxx))
    calls = "".join(f"        s += c{i}(argc);\n" for i in range(n_c)) + \
        "".join(f"        s += x{i}(argc);\n" for i in range(n_cxx))
    write(os.path.join(root, "src", "main.c"), '#include "common.h"\n' + decls +
          "int main(int argc, char **argv) {\n"
          "        int s = (int) bench_mix((uint32_t) argc);\n        (void) argv;\n" + calls +
          "        return s == 42;\n}\n")
    write(os.path.join(root, "CMakeLists.txt"),
          "cmake_minimum_required(VERSION 3.13)\nproject(benchproj C CXX)\n"
          "add_library(parts STATIC\n" + "".join(f"        {n}\n" for n in names) + ")\n"
          "target_include_directories(parts PUBLIC include)\n"
          "add_executable(prog src/main.c)\ntarget_link_libraries(prog parts)\n")


if __name__ == "__main__":
    main()
