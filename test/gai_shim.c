/*
 * LD_PRELOAD shim for test/t/153_crash_lease.pl: a DNS server that answers
 * slowly.
 *
 * Built by the test at run time:  cc -shared -fPIC -o shim.so gai_shim.c -ldl
 *
 * getaddrinfo() of a name ending in ".slow" takes 30 s, signals or not (as
 * glibc's resolver waits on: a signal does not cut it short), then fails
 * as an unknown name would; numeric lookups (AI_NUMERICHOST), which never query
 * anything, and every other name are passed through.
 *
 * Copyright (c) 2026, The uidgen developers
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netdb.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*getaddrinfo_fn) (const char *, const char *,
							   const struct addrinfo *, struct addrinfo **);

/* The real getaddrinfo(), unless the name is a slow one. */
int
getaddrinfo(const char *node, const char *service,
			const struct addrinfo *hints, struct addrinfo **res)
{
	static getaddrinfo_fn real = NULL;
	size_t		len = node != NULL ? strlen(node) : 0;

	if (real == NULL)
		real = (getaddrinfo_fn) dlsym(RTLD_NEXT, "getaddrinfo");
	if (len > 5 && strcmp(node + len - 5, ".slow") == 0 &&
		(hints == NULL || (hints->ai_flags & AI_NUMERICHOST) == 0))
	{
		time_t		end = time(NULL) + 30;

		while (time(NULL) < end)
			sleep(1);
		return EAI_NONAME;
	}
	return real(node, service, hints, res);
}
