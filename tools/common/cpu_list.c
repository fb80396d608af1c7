#include "common/cpu_list.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_space(const char *p)
{
	while (*p && isspace((unsigned char)*p))
		p++;
	return p;
}

static int parse_cpu(const char **p, unsigned long *cpu)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -1;
	*cpu = strtoul(*p, &end, 10);
	if (*cpu >= CPU_LIST_MAX)
		return -1;
	*p = end;
	return 0;
}

int cpu_list_parse(const char *text, struct cpu_list *out)
{
	const char *p = skip_space(text);

	memset(out, 0, sizeof(*out));
	if (*p == '\0' || strncmp(p, "(null)", 6) == 0)
		return 0;
	for (;;) {
		unsigned long lo, hi;

		if (parse_cpu(&p, &lo) < 0)
			return -1;
		hi = lo;
		if (*p == '-') {
			p++;
			if (parse_cpu(&p, &hi) < 0 || hi < lo)
				return -1;
		}
		for (unsigned long c = lo; c <= hi; c++)
			cpu_list_set(out, (unsigned int)c);
		if (*p != ',')
			break;
		p++;
	}
	return *skip_space(p) == '\0' ? 0 : -1;
}

char *cpu_list_format(const struct cpu_list *l, char *buf, size_t n)
{
	size_t used = 0;
	unsigned int c = 0;

	if (n == 0)
		return buf;
	buf[0] = '\0';
	while (c < CPU_LIST_MAX) {
		unsigned int start;
		int len;

		if (!cpu_list_has(l, c)) {
			c++;
			continue;
		}
		start = c;
		while (c + 1 < CPU_LIST_MAX && cpu_list_has(l, c + 1))
			c++;
		len = start == c ? snprintf(buf + used, n - used, "%s%u", used ? "," : "", start)
				 : snprintf(buf + used, n - used, "%s%u-%u", used ? "," : "", start, c);
		if (len < 0 || (size_t)len >= n - used)
			break;	/* cut at a whole range rather than mid-number */
		used += (size_t)len;
		c++;
	}
	buf[used] = '\0';
	return buf;
}

unsigned int cpu_list_count(const struct cpu_list *l)
{
	unsigned int n = 0;

	for (size_t i = 0; i < CPU_LIST_MAX / 64; i++)
		n += (unsigned int)__builtin_popcountll(l->bits[i]);
	return n;
}

bool cpu_list_subset(const struct cpu_list *a, const struct cpu_list *b)
{
	for (size_t i = 0; i < CPU_LIST_MAX / 64; i++)
		if (a->bits[i] & ~b->bits[i])
			return false;
	return true;
}

bool cpu_list_intersects(const struct cpu_list *a, const struct cpu_list *b)
{
	for (size_t i = 0; i < CPU_LIST_MAX / 64; i++)
		if (a->bits[i] & b->bits[i])
			return true;
	return false;
}

void cpu_list_minus(struct cpu_list *out, const struct cpu_list *a, const struct cpu_list *b)
{
	for (size_t i = 0; i < CPU_LIST_MAX / 64; i++)
		out->bits[i] = a->bits[i] & ~b->bits[i];
}
