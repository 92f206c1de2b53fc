/*
 * LD_PRELOAD shim for test/t/153_crash_lease.pl: a DNS server that answers
 * slowly.
 *
 * Built by the test at run time:  cc -shared -fPIC -o shim.so gai_shim.c -ldl
 *
 * getaddrinfo() of a name ending in ".slow" sleeps 30 s, then fails as an
 * unknown name would; numeric lookups (AI_NUMERICHOST), which never query
 * anything, and every other name are passed through.
 *
 * Copyright (c) 2026, The uidgen developers
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netdb.h>
#include <string.h>
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
		sleep(30);
		return EAI_NONAME;
	}
	return real(node, service, hints, res);
}
