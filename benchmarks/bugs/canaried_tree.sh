# The start of every library's build script (benchmarks/bugs/<lib>/build.sh sources it after
# setting `here` to its folder): the pristine tree BUGLIB_SRC copied to $WORK/src, the library's
# canaries.diff applied to the copy, and canary_dir set to where canary.h is (kernels/, or
# AUTOTUNE_CANARY_INCLUDE). One of the recipe's --source files (buglibs.py harness_files), so a
# change to it rebuilds every library.
: "${BUGLIB_SRC:?set BUGLIB_SRC to the pristine tree: .venv/bin/python benchmarks/bugs/buglibs.py source $(basename "$here")}"
canary_dir=${AUTOTUNE_CANARY_INCLUDE:-$(cd "$here/../../../kernels" && pwd)}

cp -a "$BUGLIB_SRC" "$WORK/src"
patch -d "$WORK/src" -p1 --quiet --forward <"$here/canaries.diff"
