#!/usr/bin/env bash
# The kernel coverage of a scripts/gpu_sanitize.sh run, in Markdown on stdout: every kernel
# that kernels/*.cu defines and how many runs of each tool launched it (a 0 is a kernel that
# tool never checked), then, for each unit run both full size and in the reduced mode
# (SEISGPU_SANITIZE_SMALL=1), the kernels the full run launched that the reduced one did not.
#
#   scripts/gpu_sanitize_coverage.sh LOGS "TOOLS"
# LOGS holds MODULE__UNIT__TOOL.kernels (the launch log of each run, SEISGPU_LAUNCH_LOG) and
# MODULE__UNIT__TOOL.tsv (its results line: module, unit, tool, mode, …).
set -uo pipefail
logs=$1
tools=$2
kernels=$(sed -n 's/.*__global__.*\b\([a-z][a-z0-9_]*\)(.*/\1/p; /__global__/{n; s/^ *\([a-z][a-z0-9_]*\)(.*/\1/p}' kernels/*.cu | sort -u)

echo "## Kernels launched (runs per tool)"
echo
printf '| kernel |'
for t in $tools; do printf ' %s |' "$t"; done
printf '\n|---|'
for _ in $tools; do printf -- '---|'; done
echo
never=0
for k in $kernels; do
    printf '| %s |' "\`$k\`"
    for t in $tools; do
        n=$(cat "$logs"/*__"$t".kernels 2>/dev/null | grep -cx "$k")
        if [ "$n" -eq 0 ]; then
            printf ' **0** |'
            never=$((never + 1))
        else
            printf ' %s |' "$n"
        fi
    done
    echo
done
echo
echo "$never (kernel, tool) pairs with no run."
echo
echo "## Reduced mode against full size, per unit"
echo
# run name → mode, from the results lines.
declare -A mode
for f in "$logs"/*.tsv; do
    [ -e "$f" ] || continue
    mode[$(basename "$f" .tsv)]=$(cut -f4 "$f")
done
compared=0
for small in "${!mode[@]}"; do
    if [ "${mode[$small]}" != small ] || [ ! -s "$logs/$small.kernels" ]; then continue; fi
    unit=${small%__*}
    for full in "${!mode[@]}"; do
        if [ "${full%__*}" != "$unit" ] || [ "${mode[$full]}" != full ] || [ ! -s "$logs/$full.kernels" ]; then
            continue
        fi
        missed=$(comm -23 <(sort -u "$logs/$full.kernels") <(sort -u "$logs/$small.kernels") | tr '\n' ' ')
        echo "- \`$unit\`: ${small##*__} (reduced) against ${full##*__} (full): ${missed:-no kernel missed}"
        compared=$((compared + 1))
        break
    done
done
[ "$compared" -gt 0 ] || echo "No unit ran in both modes in this run (compare kernels_by_run.txt of two runs)."
