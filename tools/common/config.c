/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Options from a config file (see config.h). */
#include "common/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int fail(char *err, size_t n, const char *fmt, const char *a, int line, const char *b)
{
	snprintf(err, n, fmt, a, line, b);
	return -1;
}

static int push(struct config_args *a, size_t *cap, const char *arg, const char *origin)
{
	if ((size_t)a->argc + 2 > *cap) {
		size_t c = *cap ? *cap * 2 : 32;
		char **v = realloc(a->argv, c * sizeof(*v)), **o;

		if (!v)
			return -1;
		a->argv = v;
		o = realloc(a->origin, c * sizeof(*o));
		if (!o)
			return -1;
		a->origin = o;
		*cap = c;
	}
	a->argv[a->argc] = strdup(arg);
	a->origin[a->argc] = origin ? strdup(origin) : NULL;
	if (!a->argv[a->argc] || (origin && !a->origin[a->argc]))
		return -1;
	a->argc++;
	a->argv[a->argc] = NULL;
	a->origin[a->argc] = NULL;
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/*
 * ${NAME} in a value is the environment's NAME: one sample config serves
 * every instance of the systemd unit (WIREBOOK_INSTANCE, which the unit
 * sets, and RUNTIME_DIRECTORY, which systemd does). Returns 0; -1 with
 * the name of a variable that is not set in out; -2 when the result does
 * not fit.
 */
static int expand_env(const char *in, char *out, size_t n)
{
	size_t used = 0;

	while (*in) {
		const char *end = in[0] == '$' && in[1] == '{' ? strchr(in + 2, '}') : NULL;
		const char *val = NULL;
		size_t len = 1;

		if (end) {
			char name[128];

			snprintf(name, sizeof(name), "%.*s", (int)(end - in - 2), in + 2);
			val = getenv(name);
			if (!val) {
				snprintf(out, n, "%s", name);
				return -1;
			}
			len = strlen(val);
		}
		if (used + len >= n)
			return -2;
		memcpy(out + used, end ? val : in, len);
		used += len;
		in = end ? end + 1 : in + 1;
	}
	out[used] = 0;
	return 0;
}

static int read_file(struct config_args *a, size_t *cap, const char *path,
		     const struct option *opts, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	struct stat st;
	char buf[4096], origin[1200], expanded[4096];
	int lineno = 0;

	if (!f) {
		snprintf(err, errlen, "--config %s: %s", path, strerror(errno));
		return -1;
	}
	/* A directory opens, then reads as no line: an empty config, silently. */
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		snprintf(err, errlen, "--config %s: is a directory, not a config file", path);
		return -1;
	}
	while (fgets(buf, sizeof(buf), f)) {
		const struct option *o;
		char *line, *name, *value = NULL, *hash, opt[sizeof(expanded) + 160];
		size_t n;

		lineno++;
		if (!strchr(buf, '\n') && !feof(f)) {
			fclose(f);
			return fail(err, errlen, "%s:%d: %s", path, lineno, "line longer than 4095 bytes");
		}
		/* A '#' starts a comment at the start of a line or after a space
		 * (paths may hold one). */
		for (hash = buf; (hash = strchr(hash, '#')) != NULL; hash++)
			if (hash == buf || isspace((unsigned char)hash[-1])) {
				*hash = 0;
				break;
			}
		line = trim(buf);
		if (!*line)
			continue;
		n = strcspn(line, " \t=");
		name = line;
		if (line[n]) {
			value = line + n;
			*value++ = 0;
			value = trim(value);
			if (*value == '=')
				value = trim(value + 1);
			if (!*value)
				value = NULL;
		}
		snprintf(origin, sizeof(origin), "%s:%d", path, lineno);
		if (name[0] == '-') {
			fclose(f);
			return fail(err, errlen, "%s:%d: write option names without dashes ('%s')", path,
				    lineno, name);
		}
		for (o = opts; o->name && strcmp(o->name, name); o++)
			;
		if (!o->name || !strcmp(name, "config") || !strcmp(name, "help")) {
			fclose(f);
			return fail(err, errlen, "%s:%d: unknown option '%s' (see --help; names without "
				    "dashes)", path, lineno, name);
		}
		if (o->has_arg == required_argument && !value) {
			fclose(f);
			return fail(err, errlen, "%s:%d: option '%s' needs a value", path, lineno, name);
		}
		if (o->has_arg == no_argument && value) {
			fclose(f);
			return fail(err, errlen, "%s:%d: option '%s' takes no value", path, lineno, name);
		}
		if (value) {
			int rc = expand_env(value, expanded, sizeof(expanded));

			if (rc) {
				fclose(f);
				if (rc == -2)
					return fail(err, errlen, "%s:%d: %s", path, lineno,
						    "the value is too long once ${...} are expanded");
				snprintf(err, errlen, "%s:%d: ${%s} is not set (the environment's "
					 "variables stand for ${NAME}: the unit wirebookd@NAME sets "
					 "WIREBOOK_INSTANCE, systemd RUNTIME_DIRECTORY)", path, lineno,
					 expanded);
				return -1;
			}
			value = expanded;
		}
		if (value && o->has_arg == optional_argument)
			snprintf(opt, sizeof(opt), "--%s=%s", name, value);
		else
			snprintf(opt, sizeof(opt), "--%s", name);
		if (push(a, cap, opt, origin) ||
		    (value && o->has_arg == required_argument && push(a, cap, value, origin))) {
			fclose(f);
			return fail(err, errlen, "%s:%d: %s", path, lineno, "out of memory");
		}
	}
	fclose(f);
	return 0;
}

int config_args_build(struct config_args *out, int argc, char **argv,
		      const struct option *opts, char *err, size_t errlen)
{
	const char *path = NULL;
	size_t cap = 0;
	int i, skip = -1, skip_n = 0;

	memset(out, 0, sizeof(*out));
	for (i = 1; i < argc && !path; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--config")) {
			if (i + 1 >= argc) {
				snprintf(err, errlen, "--config needs a FILE");
				return -1;
			}
			path = argv[i + 1];
			skip = i;
			skip_n = 2;
		} else if (!strncmp(argv[i], "--config=", 9)) {
			path = argv[i] + 9;
			skip = i;
			skip_n = 1;
		}
	}
	if (push(out, &cap, argv[0], NULL))
		goto oom;
	if (path && read_file(out, &cap, path, opts, err, errlen)) {
		config_args_free(out);
		return -1;
	}
	for (i = 1; i < argc; i++) {
		if (i >= skip && i < skip + skip_n)
			continue;
		if (push(out, &cap, argv[i], NULL))
			goto oom;
	}
	return 0;
oom:
	config_args_free(out);
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* The option of one_of that arg ("--name" or "--name=value") gives, or NULL. */
static const struct option *one_of_option(const char *arg, const struct option *opts,
					  const char *const *one_of)
{
	if (!arg || strncmp(arg, "--", 2))
		return NULL;
	for (const char *const *n = one_of; *n; n++) {
		size_t len = strlen(*n);

		if (strncmp(arg + 2, *n, len) || (arg[2 + len] && arg[2 + len] != '='))
			continue;
		for (const struct option *o = opts; o->name; o++)
			if (!strcmp(o->name, *n))
				return o;
	}
	return NULL;
}

void config_args_override_one_of(struct config_args *a, const struct option *opts,
				 const char *const *one_of)
{
	bool on_command_line = false;
	int i, kept = 1;

	for (i = 1; i < a->argc; i++)
		if (!a->origin[i] && one_of_option(a->argv[i], opts, one_of))
			on_command_line = true;
	if (!on_command_line)
		return;
	for (i = 1; i < a->argc; i++) {
		const struct option *o = a->origin[i] ? one_of_option(a->argv[i], opts, one_of) : NULL;
		/* The file's "--name" of a required value is followed by the value. */
		int n = o && o->has_arg == required_argument && !strchr(a->argv[i], '=') ? 2 : 1;

		if (!o) {
			a->argv[kept] = a->argv[i];
			a->origin[kept++] = a->origin[i];
			continue;
		}
		for (int k = 0; k < n && i < a->argc; k++, i++) {
			free(a->argv[i]);
			free(a->origin[i]);
		}
		i--;
	}
	a->argc = kept;
	a->argv[kept] = NULL;
	a->origin[kept] = NULL;
}

void config_args_free(struct config_args *a)
{
	for (int i = 0; i < a->argc; i++) {
		free(a->argv[i]);
		free(a->origin[i]);
	}
	free(a->argv);
	free(a->origin);
	memset(a, 0, sizeof(*a));
}
