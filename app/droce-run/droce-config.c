/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce-config: droce-run's configuration helper.
 *   droce-config --check FILE...   parse each file as droce does at its first call, nothing
 *                                  started; print "FILE:LINE: what; the fix" and exit 1 at
 *                                  the first error
 *   droce-config --reference       print every section and key as Markdown
 *                                  (doc/configuration.md)
 */
#include <stdio.h>
#include <string.h>

#include "verbs_config.h"

int main(int argc, char **argv)
{
	char err[512];
	int i;

	if (argc == 2 && strcmp(argv[1], "--reference") == 0) {
		verbs_config_reference(stdout);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	if (argc < 3 || strcmp(argv[1], "--check") != 0) {
		fprintf(stderr, "usage: droce-config --check FILE... | --reference\n");
		return 2;
	}
	for (i = 2; i < argc; i++) {
		if (verbs_config_check_file(argv[i], err, sizeof(err)) != 0) {
			fprintf(stderr, "droce: %s\n", err);
			return 1;
		}
	}
	return 0;
}
