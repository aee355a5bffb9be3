#!/bin/sh
# The objects of the runtime's event path (core.c, monitor.c, fiber.c)
# zero and copy blocks with vector stores, not `rep stos`/`rep movs`
# (runtime/CMakeLists.txt: ZGRT_STRING_OPS; every event zero-initialises
# a zri_event, and `rep stos` made that half the cost of an event without
# a monitor).  Run only where the compiler takes the option.
#   string_ops.sh OBJECT...   (the core's objects; the others are skipped)
found="" n_checked=0
for o in "$@"; do
  case $(basename "$o") in core.c.o|monitor.c.o|fiber.c.o) ;; *) continue ;; esac
  n_checked=$((n_checked + 1))
  d=$(objdump -d "$o") || { echo "string_ops: cannot disassemble $o"; exit 1; }
  n=$(printf '%s\n' "$d" | grep -c 'rep stos\|rep movs')
  [ "$n" = 0 ] || found="$found $(basename "$o"):$n"
done
if [ -n "$found" ]; then
  echo "FAIL rep stos/movs in:$found"
  exit 1
fi
[ "$n_checked" = 3 ] || { echo "FAIL found $n_checked of core.c.o, monitor.c.o, fiber.c.o in: $*"; exit 1; }
echo "string_ops: core.c.o, monitor.c.o, fiber.c.o: no rep stos/movs"
