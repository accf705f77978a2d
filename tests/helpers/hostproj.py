#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a CMake project shaped like the GPU build host's own (a ROCm
kernel library), for the tests of `cachectl measure --explain` and
`doctor` with the real tools (issue 31, item 7).

What it has, and why each part is there (each is a way the build's own
path or its settings reach ccache's key):
  - C and C++ translation units, tiny (a cold one costs gcc some 30 ms),
    spread over sub-directories added with add_subdirectory: CMake's
    Makefile generator compiles each in its own directory, Ninja from the
    build root;
  - a version header configured into the build directory
    (BUILD/gen/hostlib/version.h) that a subset includes, and a generated
    header per sub-directory (BUILD/src/partK/gen/partK_tables.h): every
    compile gets `-I` into the build directory;
  - a hand-written header a subset includes (include/hostlib/tuning.h),
    the one a test changes: its includers carry "hostlib/tuning.h" in
    their text, so `grep -rl hostlib/tuning.h src` names them;
  - HIP kernels: `.hip` files and a `.cu` compiled as HIP
    (set_source_files_properties(... LANGUAGE HIP)); each costs clang
    about 1.8 s, so there are few;
  - `.S` files (ASM: a language CMake gives no compiler launcher).

HIP with Debian's packages goes through cmake/hip-debian.cmake, a
toolchain file (tests/feature/README-hip.md says why each line is
there): configure with -DCMAKE_TOOLCHAIN_FILE=PROJECT/cmake/hip-debian.cmake.

Usage: hostproj.py DIR [--c N] [--cxx N] [--hip N] [--cu N] [--asm N]
                       [--parts N] [--version-every K] [--tuning-every K]
Prints a JSON summary (the counts, and the sources including each header).
Stdlib only.
"""
import argparse
import json
import os
import sys

DEBIAN_CMAKE = "/usr/lib/x86_64-linux-gnu/cmake"
DEBIAN_BITCODE = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode"

TOOLCHAIN = """\
# CMake's HIP language (CMake 3.25) with Debian's ROCm packages (hipcc,
# clang-15, libamdhip64-dev, rocm-cmake): tests/feature/README-hip.md
# in cachekeeper's tree says why each line is here and what fails without.
# A toolchain file, not -D options: CMake reads it again in each
# try_compile project, where CMAKE_PREFIX_PATH given with -D does not reach.
set(_debian_cmake {debian_cmake})
# CMake wants ROOT/lib/cmake/hip-lang/hip-lang-config.cmake; Debian has it
# in {debian_cmake}/hip-lang: a root whose lib/cmake is that directory.
set(_rocm_root "${{CMAKE_CURRENT_LIST_DIR}}/rocm-root")
if(NOT EXISTS "${{_rocm_root}}/lib/cmake/hip-lang/hip-lang-config.cmake")
  file(MAKE_DIRECTORY "${{_rocm_root}}/lib")
  file(CREATE_LINK "${{_debian_cmake}}" "${{_rocm_root}}/lib/cmake" SYMBOLIC)
endif()
# clang itself: CMake refuses the hipcc wrapper.
set(CMAKE_HIP_COMPILER /usr/bin/clang++-15)
# Without it: clang's default (gfx803), not the host's.
set(CMAKE_HIP_ARCHITECTURES gfx90a)
set(CMAKE_HIP_COMPILER_ROCM_ROOT "${{_rocm_root}}")
# clang-15 finds neither the HIP runtime nor the device libraries of
# Debian's layout on its own.
set(CMAKE_HIP_FLAGS_INIT "--rocm-path=/usr --rocm-device-lib-path={debian_bitcode}")
# hip-lang's find_dependency(amd_comgr), in the try_compile projects too.
list(APPEND CMAKE_PREFIX_PATH "${{_debian_cmake}}")
"""

TOP = """\
cmake_minimum_required(VERSION 3.21)
project(hostlib VERSION 5.2.3 LANGUAGES C CXX HIP ASM)
# The version header: configured into the build directory, included by a subset.
configure_file(cmake/version.h.in "${{CMAKE_BINARY_DIR}}/gen/hostlib/version.h" @ONLY)
include_directories("${{CMAKE_SOURCE_DIR}}/include" "${{CMAKE_BINARY_DIR}}/gen")
{subdirs}
"""

PART = """\
# A generated header of this directory's own, in its build directory.
configure_file(tables.h.in "${{CMAKE_CURRENT_BINARY_DIR}}/gen/{name}_tables.h" @ONLY)
add_library({name} STATIC {sources})
target_include_directories({name} PRIVATE "${{CMAKE_CURRENT_BINARY_DIR}}/gen")
"""

KERNELS = """\
# A .cu compiled as HIP, as the host's library does.
{cu_props}
add_library(kernels STATIC {sources})
"""

ASM = """\
add_library(asmlib STATIC {sources})
"""

VERSION_IN = """\
#ifndef HOSTLIB_VERSION_H
#define HOSTLIB_VERSION_H
#define HOSTLIB_VERSION_MAJOR @PROJECT_VERSION_MAJOR@
#define HOSTLIB_VERSION_MINOR @PROJECT_VERSION_MINOR@
#define HOSTLIB_VERSION_PATCH @PROJECT_VERSION_PATCH@
#define HOSTLIB_VERSION_STRING "@PROJECT_VERSION@"
#endif
"""

COMMON_H = """\
#ifndef HOSTLIB_COMMON_H
#define HOSTLIB_COMMON_H
#define HOSTLIB_SCALE(x) ((x) * 3 + 1)
#endif
"""

TUNING_H = """\
#ifndef HOSTLIB_TUNING_H
#define HOSTLIB_TUNING_H
#define HOSTLIB_TUNING 1
#endif
"""

ASM_H = """\
#define HOSTLIB_ASM_RET(n) mov $(n), %eax; ret
"""

TABLES_IN = """\
#define @PART@_TABLE_BASE @BASE@
"""


def unit_parts(part, n, tables, version, tuning):
    """The #include lines and the returned expression of a C or C++ unit:
    each header it includes is used, so a change to one changes the text."""
    inc = ['#include "hostlib/common.h"']
    expr = "HOSTLIB_SCALE(x) + %d" % n
    if tables:
        inc.append('#include "%s_tables.h"' % part)
        expr += " + %s_TABLE_BASE" % part.upper()
    if version:
        inc.append('#include "hostlib/version.h"')
        expr += " + HOSTLIB_VERSION_PATCH"
    if tuning:
        inc.append('#include "hostlib/tuning.h"')
        expr += " * HOSTLIB_TUNING"
    return "\n".join(inc), expr


def c_source(part, n, tables, version, tuning):
    inc, expr = unit_parts(part, n, tables, version, tuning)
    return "%s\nint %s_c%d(int x) { return %s; }\n" % (inc, part, n, expr)


def cxx_source(part, n, tables, version, tuning):
    inc, expr = unit_parts(part, n, tables, version, tuning)
    return ("%s\nnamespace hostlib {\ntemplate <typename T> struct %s_x%d {\n"
            "  static T run(T x) { return %s; }\n};\n"
            "int %s_x%d_run(int x) { return %s_x%d<int>::run(x); }\n}\n") % (
        inc, part, n, expr, part, n, part, n)


def hip_source(n, version, tuning):
    inc = ["#include <hip/hip_runtime.h>", '#include "hostlib/common.h"']
    expr = "HOSTLIB_SCALE(x[i]) + %d" % n
    if version:
        inc.append('#include "hostlib/version.h"')
        expr += " + HOSTLIB_VERSION_MINOR"
    if tuning:
        inc.append('#include "hostlib/tuning.h"')
        expr += " * HOSTLIB_TUNING"
    return ("%s\n__global__ void k%d(int *x, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (i < n) x[i] = %s;\n}\n"
            "extern \"C\" void launch_k%d(int *x, int n) {\n"
            "  hipLaunchKernelGGL(k%d, dim3((n + 63) / 64), dim3(64), 0, 0, x, n);\n}\n") % (
        "\n".join(inc), n, expr, n, n)


def asm_source(n):
    return ('#include "hostlib/asm.h"\n\t.text\n\t.globl hostlib_asm%d\n'
            '\t.type hostlib_asm%d, @function\nhostlib_asm%d:\n\tHOSTLIB_ASM_RET(%d)\n'
            '\t.section .note.GNU-stack,"",@progbits\n') % (n, n, n, n)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--c", type=int, default=120, help="C translation units")
    ap.add_argument("--cxx", type=int, default=80, help="C++ translation units")
    ap.add_argument("--hip", type=int, default=2, help=".hip kernels")
    ap.add_argument("--cu", type=int, default=1, help=".cu kernels compiled as HIP")
    ap.add_argument("--asm", type=int, default=2, help=".S files")
    ap.add_argument("--parts", type=int, default=6, help="sub-directories for the C and C++ units")
    ap.add_argument("--version-every", type=int, default=7,
                    help="every K-th unit includes the configured version header")
    ap.add_argument("--tuning-every", type=int, default=11,
                    help="every K-th unit includes include/hostlib/tuning.h")
    a = ap.parse_args()
    if a.parts < 1 or min(a.c, a.cxx, a.hip, a.cu, a.asm) < 0 or a.version_every < 1 or a.tuning_every < 1:
        ap.error("counts must be >= 0, --parts and the -every's >= 1")

    d = os.path.abspath(a.dir)
    write(os.path.join(d, "cmake", "hip-debian.cmake"),
          TOOLCHAIN.format(debian_cmake=DEBIAN_CMAKE, debian_bitcode=DEBIAN_BITCODE))
    write(os.path.join(d, "cmake", "version.h.in"), VERSION_IN)
    write(os.path.join(d, "include", "hostlib", "common.h"), COMMON_H)
    write(os.path.join(d, "include", "hostlib", "tuning.h"), TUNING_H)
    write(os.path.join(d, "include", "hostlib", "asm.h"), ASM_H)

    includers = {"hostlib/version.h": [], "hostlib/tuning.h": []}
    unit = 0

    def flags(rel):
        nonlocal unit
        unit += 1
        v = unit % a.version_every == 0
        t = unit % a.tuning_every == 0
        if v:
            includers["hostlib/version.h"].append(rel)
        if t:
            includers["hostlib/tuning.h"].append(rel)
        return v, t

    # C and C++ round-robin over the parts, so every part has both.
    parts = [[] for _ in range(a.parts)]
    for i in range(a.c + a.cxx):
        k = i % a.parts
        part = "part%d" % k
        cxx = i >= a.c
        n = i - a.c if cxx else i
        name = ("x%d.cpp" if cxx else "c%d.c") % n
        rel = "src/%s/%s" % (part, name)
        v, t = flags(rel)
        tables = i % 3 == 0
        gen = cxx_source if cxx else c_source
        write(os.path.join(d, rel), gen(part, n, tables, v, t))
        parts[k].append(name)
    subdirs = []
    for k, files in enumerate(parts):
        if not files:
            continue
        part = "part%d" % k
        subdirs.append("src/" + part)
        write(os.path.join(d, "src", part, "CMakeLists.txt"),
              PART.format(name=part, sources=" ".join(files)))
        write(os.path.join(d, "src", part, "tables.h.in"),
              TABLES_IN.replace("@PART@", part.upper()).replace("@BASE@", str(k * 100)))

    kernels = []
    for i in range(a.hip + a.cu):
        name = ("k%d.hip" if i < a.hip else "k%d.cu") % i
        rel = "kernels/" + name
        v, t = (i == 0, False)      # one kernel includes the version header, none tuning.h
        if v:
            includers["hostlib/version.h"].append(rel)
        write(os.path.join(d, rel), hip_source(i, v, t))
        kernels.append(name)
    if kernels:
        subdirs.append("kernels")
        cu = [k for k in kernels if k.endswith(".cu")]
        props = "set_source_files_properties(%s PROPERTIES LANGUAGE HIP)" % " ".join(cu) if cu else ""
        write(os.path.join(d, "kernels", "CMakeLists.txt"),
              KERNELS.format(cu_props=props, sources=" ".join(kernels)))

    if a.asm:
        files = ["s%d.S" % i for i in range(a.asm)]
        for i, name in enumerate(files):
            write(os.path.join(d, "asm", name), asm_source(i))
        subdirs.append("asm")
        write(os.path.join(d, "asm", "CMakeLists.txt"), ASM.format(sources=" ".join(files)))

    write(os.path.join(d, "CMakeLists.txt"),
          TOP.format(subdirs="\n".join("add_subdirectory(%s)" % s for s in subdirs)))
    json.dump({"dir": d, "c": a.c, "cxx": a.cxx, "hip": a.hip, "cu": a.cu, "asm": a.asm,
               "parts": len([p for p in parts if p]),
               "compiles": a.c + a.cxx + a.hip + a.cu, "includers": includers},
              sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
