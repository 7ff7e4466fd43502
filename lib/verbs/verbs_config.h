/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * The configuration's keys (internal; not installed): one table, verbs_config_keys.c, of
 * every section and key droce reads, with its type, default, range and meaning. The INI
 * parser (verbs_config.c) refuses what the table does not list or allow; the layers that
 * interpret a section (the engine: [engine], [dcqcn]; lib/cm: [cm]) take their values and
 * defaults from it; doc/configuration.md is its Markdown form (verbs_config_reference()).
 */
#ifndef VERBS_CONFIG_H
#define VERBS_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "verbs_engine.h"

enum verbs_cfg_type {
	VERBS_CFG_UINT,		/**< a number (decimal, 0x hex), min..max; empty: the default */
	VERBS_CFG_WORD,		/**< one of the words in verbs_cfg_key.words */
	VERBS_CFG_TEXT,		/**< free text of fewer than max characters */
	VERBS_CFG_LCORES,	/**< empty, "auto", or a list of lcore ids "1,3" / "1-2" */
	VERBS_CFG_COUNT_ALL,	/**< min..max or "all" */
	VERBS_CFG_MAC,		/**< 02:00:00:00:00:01 */
	VERBS_CFG_IPV4,		/**< a.b.c.d */
	VERBS_CFG_IPV6,		/**< IPv6 addresses, comma-separated */
	VERBS_CFG_NEIGH,	/**< ADDR@MAC, comma-separated */
};

struct verbs_cfg_key {
	const char *section;	/**< "eal", "engine", "cm", "dcqcn" or "device" ([device NAME]) */
	const char *key;
	enum verbs_cfg_type type;
	const char *def;	/**< the default, as the INI would say it ("" : none) */
	unsigned long min, max;	/**< UINT, COUNT_ALL: the range; TEXT: max is the length limit */
	const char *words;	/**< WORD: "a|b|c" */
	const char *meaning;	/**< one line */
};

/** The key @p key of section kind @p section, NULL if there is none. */
const struct verbs_cfg_key *verbs_cfg_key_find(const char *section, const char *key);
/** Whether @p section is a section kind of the table ("device" for [device NAME]). */
bool verbs_cfg_section_known(const char *section);
/**
 * The key of @p section nearest to @p key by edit distance (the section of another key of that
 * name when @p section has none, in @p other_section), NULL if none is near.
 */
const char *verbs_cfg_suggest_key(const char *section, const char *key,
				  const char **other_section);
/** The section kind nearest to @p word, NULL if none is near. */
const char *verbs_cfg_suggest_section(const char *word);
/**
 * Check @p value against @p k's type and range.
 * @return 0, or -EINVAL with the reason in @p why ("70000 is above the maximum 65535").
 */
int verbs_cfg_check(const struct verbs_cfg_key *k, const char *value, char *why, size_t len);
/**
 * The value of UINT key @p key of @p section: the last of @p kv (entries already checked by
 * the parser) that says it, else the table's default.
 */
unsigned int verbs_cfg_uint(const char *section, const struct verbs_kv *kv, unsigned int n,
			    const char *key);
/**
 * Check section @p section's entries @p kv against the table (for callers that build them).
 * @return 0, or -EINVAL after logging the first bad one.
 */
int verbs_cfg_check_kv(const char *section, const struct verbs_kv *kv, unsigned int n);
/**
 * Where the configuration in use says @p key of @p section ("engine", or "device NAME"; key
 * NULL: the section itself), as "FILE:LINE" into @p buf ("FILE" when it does not say it), for
 * the errors found after loading (an lcore EAL does not have).
 */
void verbs_config_where(const char *section, const char *key, char *buf, size_t len);
/** Write the table as Markdown (doc/configuration.md). */
void verbs_config_reference(FILE *f);
/**
 * Parse the configuration @p path (NULL: the embedded default) without using it.
 * @return 0; -EIO (cannot read) or -EINVAL, with "PATH:LINE: what; the fix" in @p err.
 */
int verbs_config_check_file(const char *path, char *err, size_t len);

#endif /* VERBS_CONFIG_H */
