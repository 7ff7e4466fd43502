#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# Open MPI's remote shell into a rig guest (--mca plm_rsh_agent, test/interop/ucx_mpi_interop.py):
# mpirun runs "rig_rsh.sh HOST COMMAND..." as it would run ssh; HOST is the guest's address
# 10.47.0.N, COMMAND (orted and its arguments, quoted for a shell as ssh passes them) runs in
# guest N through its agent (test/rig/rig.py exec), in the foreground as under ssh: this ends
# when orted ends, with its status. The rig is the one in netns $RIG_NS; RIG_RSH_TIMEOUT (s,
# default 300) bounds the command, RIG_RSH_LOG (optional) collects what it printed.
set -u
[ "$#" -ge 2 ] || { echo "usage: rig_rsh.sh 10.47.0.N COMMAND..." >&2; exit 2; }
host=$1
shift
case $host in
10.47.0.[1-9]) n=${host#10.47.0.} ;;
*) echo "rig_rsh.sh: $host is no rig guest (10.47.0.1-9)" >&2; exit 2 ;;
esac
here=$(dirname "$0")
log=${RIG_RSH_LOG:-/dev/null}
echo "rig_rsh.sh: g$n: $*" >> "$log"
python3 "$here/../rig/rig.py" exec "$n" --timeout "${RIG_RSH_TIMEOUT:-300}" "$@" >> "$log" 2>&1
rc=$?
echo "rig_rsh.sh: g$n: exit $rc" >> "$log"
exit $rc
