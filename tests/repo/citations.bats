#!/usr/bin/env bats
# What the comments cite is in the tree and says what they cite it for: no
# line in daemon/, ctl/ or tests/ names a note outside the repository (the
# design, ccache, style and testing notes the code was first written from),
# every `FILE.md §n` names a file of the tree that has a section n, every
# bare §n in a .md file a section of that file, and every `PAGE.N, SECTION`
# a man page with that section. FILE is a path from the top or, as the
# daemon's includes are, from daemon/. Reads files only: no daemon, no build.
# tests/run: takes 39 s
load ../lib/helper

# The notes outside the tree, by name.
OUTSIDE='\b(DESIGN|CCACHE|STYLE|TESTING)\.md\b'
# A citation: FILE.md then one or more section numbers.
CITE='[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md,? (§ ?|section )[0-9]+((, | and )(§ ?)?[0-9]+)*'
# A man page section: PAGE.N, SECTION IN CAPITALS.
MAN_CITE='[A-Za-z0-9_./-]+\.[1-8], [A-Z][A-Z0-9 ]*[A-Z0-9]'

# resolve ROOT PATH: the file PATH names below ROOT or ROOT/daemon, or fails.
resolve() {
        if [ -f "$1/$2" ]; then
                echo "$1/$2"
        elif [ -f "$1/daemon/$2" ]; then
                echo "$1/daemon/$2"
        else
                return 1
        fi
}

# has_section FILE N: FILE (markdown) has a heading "N. ..." at any level.
has_section() {
        grep -qE "^#{1,6} $2\. " "$1"
}

# check_citations ROOT: fails, naming each, on a line citing a note outside
# the tree and on a citation whose file or section does not exist; also when
# it finds fewer citations than the tree has (a parser gone blind passes
# nothing).
check_citations() {
        local root=$1 bad=0 n=0 where cite path target num page section
        local -a nums

        while IFS= read -r where; do
                echo "cites a note outside the tree: $where" >&2
                bad=1
        done < <(cd "$root" && grep -rInE "$OUTSIDE" daemon ctl tests --exclude=citations.bats)

        while IFS= read -r where; do
                cite=${where#*:*:}
                where=${where%":$cite"}
                path=${cite%%.md*}.md
                if ! target=$(resolve "$root" "$path"); then
                        echo "$where: cites $path, which is not in the tree" >&2
                        bad=1
                        continue
                fi
                mapfile -t nums < <(grep -oE '[0-9]+' <<<"${cite#"$path"}")
                for num in "${nums[@]}"; do
                        has_section "$target" "$num" ||
                                { echo "$where: cites $path §$num, which ${target#"$root"/} has no section of" >&2; bad=1; }
                        n=$((n + 1))
                done
        done < <(cd "$root" && grep -rIonE "$CITE" daemon ctl tests --exclude=citations.bats)

        # A .md file's own sections, cited bare: what is left once the
        # citations of other files are taken out.
        while IFS= read -r target; do
                while IFS= read -r num; do
                        has_section "$target" "$num" ||
                                { echo "${target#"$root"/}: cites §$num, a section it does not have" >&2; bad=1; }
                        n=$((n + 1))
                done < <(sed -E "s#$CITE##g" "$target" | grep -oE '§ ?[0-9]+' | grep -oE '[0-9]+')
        done < <(find "$root/daemon" "$root/ctl" "$root/tests" -name '*.md' -type f)

        while IFS= read -r where; do
                cite=${where#*:*:}
                where=${where%":$cite"}
                page=${cite%%, *} section=${cite#*, }
                if ! target=$(resolve "$root" "$page"); then
                        echo "$where: cites $page, which is not in the tree" >&2
                        bad=1
                        continue
                fi
                grep -qxE "\.SH \"?$section\"?" "$target" ||
                        { echo "$where: cites $page, $section, which ${target#"$root"/} has no section of" >&2; bad=1; }
                n=$((n + 1))
        done < <(cd "$root" && grep -rIonE "$MAN_CITE" daemon ctl tests --exclude=citations.bats)

        [ "$n" -ge 30 ] || { echo "only $n citations found" >&2; bad=1; }
        return "$bad"
}

# Files of other projects the comments name, each by the name its project
# gives it: the only .c/.h names that need not be in the tree.
EXTERNAL=" libconfig.h cmocka.h inotifytools.h libinotifytools/src/inotifytools.c adapters/libevent.h async.c
           hip_runtime.h hip/hip_runtime.h stdc-predef.h "

# The files whose text cites: C sources and headers (their comments), notes
# (.md, every line), and scripts: bats files, their helper, Python helpers
# and the test and CI scripts (their # comments; Python's docstrings too).
CITING_C="daemon ctl tests"
CITING_SCRIPTS="tests .ci"

# file_cites ROOT: "FILE:LINE NAME" for each X.c, X.h, X.bats or X.py a
# comment of a C file, a line of a .md file in daemon/, ctl/ or tests/ or of
# README.md (outside code blocks), or a
# comment of a script in tests/ or .ci/ (and the Makefile) names (string
# literals blanked first in C: test data is no citation).
file_cites() {
        (cd "$1" && find $CITING_C -name '*.[ch]' -type f -print0 | xargs -0 perl -e '
                for my $f (@ARGV) {
                        open my $h, "<", $f or die "$f: $!"; local $/; my $s = <$h>;
                        $s =~ s{"(?:\\.|[^"\\\n])*"}{"\"" . (" " x (length($&) - 2)) . "\""}ge;
                        while ($s =~ m{/\*.*?\*/|//[^\n]*}gs) {
                                my $l = 1 + (substr($s, 0, $-[0]) =~ tr/\n//);
                                for my $part (split /\n/, $&, -1) {
                                        print "$f:$l $1\n" while $part =~ m{(?<![\w./-])(\w[\w./-]*\.(?:[ch]|bats|py))(?![\w-])}g;
                                        $l++;
                                }
                        }
                }'
        cd "$1" && { find $CITING_C -name '*.md' -type f -print0; printf 'README.md\0'; } | xargs -0 perl -ne '
                # Code blocks (fenced, or indented four spaces) show output and examples, not citations.
                $fence = !$fence if /^\s*```/;
                print "$ARGV:$. $1\n" while !$fence && !/^(    |\t)/ && m{(?<![\w./\\-])(\w[\w./-]*\.(?:[ch]|bats|py))(?![\w-])}g;
                if (eof) { close ARGV; $fence = 0 }'
        cd "$1" && { find $CITING_SCRIPTS -type f \( -name '*.bats' -o -name '*.bash' -o -name '*.py' -o -name run \
                -o -name 'check-*' -o -name deps \) -print0; printf 'Makefile\0'; } | xargs -0 perl -e '
                my $name = qr{(?<![\w./\\\$-])(\w[\w./-]*\.(?:[ch]|bats|py))(?![\w-])};
                for my $f (@ARGV) {
                        open my $h, "<", $f or die "$f: $!"; my (@said, $data, $str, $strs);
                        while (<$h>) {
                                # Python: the first """ string is the module docstring; later ones are data.
                                my $doc = $str && $strs == 1;
                                if ($f =~ /\.py$/ && /"""/) {
                                        if (/""".*"""/) { $doc = !$str && !$strs; $strs++ unless $str }
                                        else { $str = !$str; $strs++ if $str }
                                }
                                $doc ||= $str && $strs == 1;
                                my ($code, $t) = $str && !$doc ? ($_, "") : /^\s*#/ || $doc ? ("", $_)
                                        : /^(.*?)(?<=\s)#(?![{!])(.*)/ ? ($1, $2) : ($_, "");
                                $data .= $code;
                                push @said, [$., $1] while $t =~ m{$name}g;
                        }
                        # A name the script itself writes or reads (its test data) is no citation.
                        for (@said) {
                                my $base = $_->[1] =~ s{.*/}{}r;
                                print "$f:$_->[0] $_->[1]\n" unless $data =~ m{(?<![\w-])\Q$base\E(?![\w-])};
                        }
                }')
}

# check_file_citations ROOT: fails, naming each, on a .c, .h, .bats or .py
# file a comment names that is in the tree neither as a path (from the top,
# from daemon/ or ctl/, as their includes name them, or from the citing
# file's folder) nor by its name alone, and is no other project's
# (EXTERNAL); a placeholder in capitals (FILE.c, test-X.c, BUILD/x.h) is no citation.
# Also fails when it finds too few (a parser gone blind).
check_file_citations() {
        local root=$1 bad=0 n=0 where name base names ext
        ext=" $(echo $EXTERNAL) "
        names=$(cd "$root" && find daemon ctl tests -name '*.[ch]' -o -name '*.bats' -o -name '*.py' | sed 's|.*/||' | sort -u)
        while read -r where name; do
                n=$((n + 1))
                base=${name##*/}
                [[ "$base" =~ (^|-)[A-Z]+\.([ch]|bats|py)$ || "$name" =~ (^|/)[A-Z]+/ ]] && continue
                [[ "$ext" == *" $name "* ]] && continue
                [ -f "$root/$name" ] || [ -f "$root/daemon/$name" ] || [ -f "$root/ctl/$name" ] || [ -f "$root/$(dirname "${where%%:*}")/$name" ] ||
                        { [[ "$name" != */* ]] && grep -qxF "$base" <<<"$names"; } ||
                        { echo "$where: cites $name, which is not in the tree" >&2; bad=1; }
        done < <(file_cites "$root")
        [ "$n" -ge 100 ] || { echo "only $n file citations found" >&2; bad=1; }
        return "$bad"
}

@test "every .c, .h, .bats and .py file a comment, a note or a script in daemon/, ctl/, tests/, .ci/ and README.md names is in the tree" {
        check_file_citations "$TOP"
}

# A copy of what the check reads, to spoil.
copy_tree() {
        T=$BATS_TEST_TMPDIR/tree
        mkdir -p "$T"
        cp -r "$TOP/daemon" "$TOP/ctl" "$TOP/tests" "$TOP/.ci" "$TOP/Makefile" "$TOP/README.md" "$T/"
}

@test "every citation in daemon/, ctl/ and tests/ names a file of the tree and a section it has" {
        check_citations "$TOP"
}

@test "the check bites: a note outside the tree, a file or a section that is not there each fail it" {
        copy_tree
        check_citations "$T"     # the copy passes as it is: what fails below is what was spoiled
        # Citations of each kind gone wrong, in a file of their own (whatever
        # moves where in the code, these stay).
        cat > "$T/daemon/evict/spoiled.h" <<'SPOILED'
/* A note outside the tree, as the code once cited it (CCACHE.md §7). */
/* A section the file does not have, second in a list (ccache/README.md §2, §17). */
/* A file that is not there (ccache/NOTES.md §3). */
/* A man page section that is not there (ctl/cachectl.1, NO SUCH SECTION). */
SPOILED
        # A section taken away: every citation of it now points at nothing.
        sed -i 's/^## 9\. Entry header$/## Entry header/' "$T/daemon/ccache/README.md"
        # A rule renumbered in daemon/README.md.
        sed -i 's/^### 4\. Re-check/### 9. Re-check/' "$T/daemon/README.md"
        # A man page section renamed.
        sed -i 's/^\.SH STATUS JSON$/.SH STATUS/' "$T/ctl/cachectl.1"
        run check_citations "$T"
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"cites a note outside the tree: daemon/evict/spoiled.h:1:"*"CCACHE.md §7"* ]]
        [[ "$output" == *"daemon/evict/spoiled.h:2: cites ccache/README.md §17, which daemon/ccache/README.md has no section of"* ]]
        [[ "$output" != *"cites ccache/README.md §2,"* ]]
        [[ "$output" == *"daemon/evict/spoiled.h:3: cites ccache/NOTES.md, which is not in the tree"* ]]
        [[ "$output" == *"daemon/evict/spoiled.h:4: cites ctl/cachectl.1, NO SUCH SECTION, which ctl/cachectl.1 has no section of"* ]]
        [[ "$output" == *": cites ccache/README.md §9, which daemon/ccache/README.md has no section of"* ]]
        [[ "$output" == *"tests/helpers/ccache-entry.py:"*": cites daemon/ccache/README.md §9, which daemon/ccache/README.md has no section of"* ]]
        [[ "$output" == *": cites daemon/README.md §4, which daemon/README.md has no section of"* ]]
        [[ "$output" == *": cites ctl/cachectl.1, STATUS JSON, which ctl/cachectl.1 has no section of"* ]]
}

@test "the check bites: a bare § in a .md file names a section of that file" {
        copy_tree
        sed -i '0,/ (§7)/s// (§12)/' "$T/daemon/ccache/README.md"
        run check_citations "$T"
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"daemon/ccache/README.md: cites §12, a section it does not have"* ]]
}

@test "the check bites: a parser gone blind (no citation found) fails it" {
        copy_tree
        find "$T" -type f -exec sed -i 's/§/S/g; s/\(\.[1-8]\), \([A-Z]\)/\1 \2/g' {} +
        run check_citations "$T"
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"only 0 citations found"* ]]
}

@test "the check bites: a comment naming a .c or .h that is not in the tree, or by a wrong path, fails it" {
        copy_tree
        check_file_citations "$T"
        printf '/* As in remote.h, and tree/scan.c; see evict/scan.c and FILE.c. */\n' > "$T/daemon/evict/spoiled.c"
        printf 'The parser (ctl/nowhere.c) and `daemon/tree/scan.c`.\n' > "$T/ctl/SPOILED.md"
        run check_file_citations "$T"
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"daemon/evict/spoiled.c:1: cites remote.h, which is not in the tree"* ]]
        [[ "$output" == *"daemon/evict/spoiled.c:1: cites evict/scan.c, which is not in the tree"* ]]
        [[ "$output" == *"ctl/SPOILED.md:1: cites ctl/nowhere.c, which is not in the tree"* ]]
        [[ "$output" != *"tree/scan.c,"* && "$output" != *"FILE.c"* ]]
}

@test "the check bites: a .bats or .py file named in a comment, a docstring or a note that is not in the tree fails it; test data does not" {
        copy_tree
        check_file_citations "$T"
        printf '/* Attacked by hostile-nothing.bats and tests/integration/merge.bats. */\n' > "$T/daemon/evict/spoiled.c"
        printf '#!/usr/bin/env bats\n# As tests/helpers/gone.py does; see merge-hostile.bats.\n' > "$T/tests/feature/spoiled.bats"
        printf '@test "t" {\n\techo int > "$BATS_TEST_TMPDIR/made.c" # made.c is its data\n}\n' >> "$T/tests/feature/spoiled.bats"
        printf '"""Drips like tests/soak/dripper.py."""\nX = """\n# data.py: a template\n"""\n' > "$T/tests/helpers/spoiled.py"
        printf '# the writer, lib/nowhere.py\n' >> "$T/Makefile"
        printf 'Read `tests/repo/old.bats`.\n' > "$T/tests/SPOILED.md"
        printf 'The cap under load (`tests/integration/cap-load.bats`).\n\n    $ ls\n    example.c\n' >> "$T/README.md"
        run check_file_citations "$T"
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"daemon/evict/spoiled.c:1: cites hostile-nothing.bats, which is not in the tree"* ]]
        [[ "$output" == *"daemon/evict/spoiled.c:1: cites tests/integration/merge.bats, which is not in the tree"* ]]
        [[ "$output" == *"tests/feature/spoiled.bats:2: cites tests/helpers/gone.py, which is not in the tree"* ]]
        [[ "$output" == *"tests/helpers/spoiled.py:1: cites tests/soak/dripper.py, which is not in the tree"* ]]
        [[ "$output" == *"Makefile:"*": cites lib/nowhere.py, which is not in the tree"* ]]
        [[ "$output" == *"tests/SPOILED.md:1: cites tests/repo/old.bats, which is not in the tree"* ]]
        [[ "$output" == *"README.md:"*": cites tests/integration/cap-load.bats, which is not in the tree"* ]]
        [[ "$output" != *"example.c"* ]]
        [[ "$output" != *"merge-hostile.bats"* && "$output" != *"made.c"* && "$output" != *"data.py"* ]]
}
