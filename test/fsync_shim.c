/*
 * LD_PRELOAD shim for test/t/045_state_durability.pl: records the system
 * calls that make uidgen.state durable, and fails some on request.
 *
 * Built by the test at run time:  cc -shared -fPIC -o shim.so fsync_shim.c -ldl
 *
 * UIDGEN_SHIM_LOG   file to which one line per call is appended:
 *                     <pid> open <tag> <fd>
 *                     <pid> write <tag> <fd> <bytes asked> <result>
 *                     <pid> fsync|fdatasync <tag> <fd> <result>
 *                     <pid> close <tag> <fd>
 *                     <pid> rename <from tag> <to tag> <result>
 *                   where <tag> is "tmp" (uidgen.state.tmp), "state"
 *                   (uidgen.state) or "dir" (the data directory: "." or
 *                   UIDGEN_SHIM_DIR); calls on other files are not logged.
 * UIDGEN_SHIM_FAIL  a trigger file: while it exists and holds
 *                   "write ENOSPC", "write EIO", "fsync ENOSPC" or
 *                   "fsync EIO", that call fails on uidgen.state.tmp with
 *                   that errno (logged with result "-1 injected").
 *
 * Copyright (c) 2026, The uidgen developers
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_FD 65536

enum
{
	T_NONE, T_TMP, T_STATE, T_DIR
};
static const char *const tag_name[] = {"other", "tmp", "state", "dir"};
static unsigned char fd_tag[MAX_FD];

static int	(*real_open) (const char *, int, ...);
static int	(*real_open64) (const char *, int, ...);
static int	(*real_openat) (int, const char *, int, ...);
static int	(*real_openat64) (int, const char *, int, ...);
static ssize_t (*real_write) (int, const void *, size_t);
static int	(*real_fsync) (int);
static int	(*real_fdatasync) (int);
static int	(*real_rename) (const char *, const char *);
static int	(*real_close) (int);

static void
shim_init(void)
{
	if (real_write)
		return;
	real_open = dlsym(RTLD_NEXT, "open");
	real_open64 = dlsym(RTLD_NEXT, "open64");
	real_openat = dlsym(RTLD_NEXT, "openat");
	real_openat64 = dlsym(RTLD_NEXT, "openat64");
	real_fsync = dlsym(RTLD_NEXT, "fsync");
	real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
	real_rename = dlsym(RTLD_NEXT, "rename");
	real_close = dlsym(RTLD_NEXT, "close");
	real_write = dlsym(RTLD_NEXT, "write");
}

__attribute__((constructor))
static void
shim_ctor(void)
{
	shim_init();
}

static int
path_tag(const char *path)
{
	const char *base;
	const char *dir = getenv("UIDGEN_SHIM_DIR");

	if (path == NULL)
		return T_NONE;
	if (strcmp(path, ".") == 0 || strcmp(path, "./") == 0 ||
		(dir != NULL && strcmp(path, dir) == 0))
		return T_DIR;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strcmp(base, "uidgen.state.tmp") == 0)
		return T_TMP;
	if (strcmp(base, "uidgen.state") == 0)
		return T_STATE;
	return T_NONE;
}

static int
get_tag(int fd)
{
	return fd >= 0 && fd < MAX_FD ? fd_tag[fd] : T_NONE;
}

/* Append one line to the log (one write, O_APPEND: lines do not mix). */
static void
shim_log(const char *fmt,...)
{
	const char *path = getenv("UIDGEN_SHIM_LOG");
	char		line[512];
	int			n;
	int			fd;
	int			save_errno = errno;
	va_list		ap;

	if (path == NULL)
		return;
	n = snprintf(line, sizeof(line), "%d ", (int) getpid());
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (n >= (int) sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	fd = real_open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
	{
		(void) real_write(fd, line, n);
		(void) real_close(fd);
	}
	errno = save_errno;
}

/* The errno to inject into "call" on uidgen.state.tmp, or 0. */
static int
shim_fail(const char *call)
{
	const char *path = getenv("UIDGEN_SHIM_FAIL");
	char		buf[64];
	char		want[32];
	ssize_t		n;
	int			fd;
	int			save_errno = errno;
	int			result = 0;

	if (path == NULL)
		return 0;
	fd = real_open(path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
	{
		errno = save_errno;
		return 0;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	real_close(fd);
	buf[n > 0 ? n : 0] = '\0';
	snprintf(want, sizeof(want), "%s ENOSPC", call);
	if (strncmp(buf, want, strlen(want)) == 0)
		result = ENOSPC;
	snprintf(want, sizeof(want), "%s EIO", call);
	if (strncmp(buf, want, strlen(want)) == 0)
		result = EIO;
	errno = save_errno;
	return result;
}

static int
after_open(const char *path, int fd)
{
	int			tag = path_tag(path);

	if (fd >= 0 && fd < MAX_FD)
		fd_tag[fd] = tag;
	if (tag != T_NONE && fd >= 0)
		shim_log("open %s %d", tag_name[tag], fd);
	return fd;
}

#define MODE_ARG(flags, mode) \
	do { \
		if ((flags) & (O_CREAT | O_TMPFILE)) \
		{ \
			va_list ap; \
			va_start(ap, flags); \
			mode = va_arg(ap, int); \
			va_end(ap); \
		} \
	} while (0)

int
open(const char *path, int flags,...)
{
	int			mode = 0;

	shim_init();
	MODE_ARG(flags, mode);
	return after_open(path, real_open(path, flags, mode));
}

int
open64(const char *path, int flags,...)
{
	int			mode = 0;

	shim_init();
	MODE_ARG(flags, mode);
	return after_open(path, real_open64(path, flags, mode));
}

int
openat(int dirfd, const char *path, int flags,...)
{
	int			mode = 0;

	shim_init();
	MODE_ARG(flags, mode);
	return after_open(path, real_openat(dirfd, path, flags, mode));
}

int
openat64(int dirfd, const char *path, int flags,...)
{
	int			mode = 0;

	shim_init();
	MODE_ARG(flags, mode);
	return after_open(path, real_openat64(dirfd, path, flags, mode));
}

/* _FORTIFY_SOURCE builds call these for open() with two arguments. */
int
__open_2(const char *path, int flags)
{
	shim_init();
	return after_open(path, real_open(path, flags, 0));
}

int
__open64_2(const char *path, int flags)
{
	shim_init();
	return after_open(path, real_open64(path, flags, 0));
}

ssize_t
write(int fd, const void *buf, size_t count)
{
	int			tag;
	ssize_t		r;
	int			err;

	shim_init();
	tag = get_tag(fd);
	if (tag == T_NONE)
		return real_write(fd, buf, count);
	if (tag == T_TMP && (err = shim_fail("write")) != 0)
	{
		shim_log("write %s %d %zu -1 injected", tag_name[tag], fd, count);
		errno = err;
		return -1;
	}
	r = real_write(fd, buf, count);
	shim_log("write %s %d %zu %zd", tag_name[tag], fd, count, r);
	return r;
}

static int
sync_call(const char *name, int (*real) (int), int fd)
{
	int			tag = get_tag(fd);
	int			r;
	int			err;

	if (tag == T_NONE)
		return real(fd);
	if (tag == T_TMP && (err = shim_fail("fsync")) != 0)
	{
		shim_log("%s %s %d -1 injected", name, tag_name[tag], fd);
		errno = err;
		return -1;
	}
	r = real(fd);
	shim_log("%s %s %d %d", name, tag_name[tag], fd, r);
	return r;
}

int
fsync(int fd)
{
	shim_init();
	return sync_call("fsync", real_fsync, fd);
}

int
fdatasync(int fd)
{
	shim_init();
	return sync_call("fdatasync", real_fdatasync, fd);
}

int
rename(const char *from, const char *to)
{
	int			ft;
	int			tt;
	int			r;

	shim_init();
	ft = path_tag(from);
	tt = path_tag(to);
	r = real_rename(from, to);
	if (ft != T_NONE || tt != T_NONE)
		shim_log("rename %s %s %d", tag_name[ft], tag_name[tt], r);
	return r;
}

int
close(int fd)
{
	int			tag;

	shim_init();
	tag = get_tag(fd);
	if (fd >= 0 && fd < MAX_FD)
		fd_tag[fd] = T_NONE;
	if (tag != T_NONE)
		shim_log("close %s %d", tag_name[tag], fd);
	return real_close(fd);
}
