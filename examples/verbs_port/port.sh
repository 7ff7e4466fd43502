#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# Port a libibverbs program to droce: rename every ibv_ to droce_ and use <droce.h>.
# Usage: port.sh IN.c OUT.c
set -e
sed -e 's/ibv_/droce_/g' -e 's|<infiniband/verbs.h>|<droce.h>|' "$1" > "$2"
