/*-------------------------------------------------------------------------
 *
 * statefileio.c
 *	  The format of $PGDATA/uidgen.state on disk: read it, check it, and
 *	  write it durably.  clock/statefile.c decides what goes in; this module
 *	  also serves replicas/upgrade.c, which in binary-upgrade mode reads and
 *	  writes this file and the pg_upgrade hand-off file elsewhere.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "pgstat.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"

#include "clock/statefileio.h"
#include "core/compat.h"

#define STATE_MAGIC		0x55494447	/* "UIDG" */
#define STATE_VERSION	4

/*
 * 0.1.0 wrote version 2: the fields up to upgrade_unknown, then padding and
 * its CRC where copy_reason and the fields after it now are.  Such files
 * stay readable.
 */
#define STATE_V2_VERSION	2
#define STATE_V2_CRC_AT		TYPEALIGN(sizeof(pg_crc32c), offsetof(StateFileData, upgrade_unknown) + 1)
#define STATE_V2_SIZE		TYPEALIGN(sizeof(uint64), STATE_V2_CRC_AT + sizeof(pg_crc32c))
StaticAssertDecl(offsetof(StateFileData, upgrade_unknown) ==
				 offsetof(StateFileData, rebase_pending) + 1 &&
				 offsetof(StateFileData, copy_reason) <= STATE_V2_CRC_AT &&
				 STATE_V2_SIZE == 56,
				 "the layout of uidgen.state changed");
/*
 * 0.2.0 wrote version 3: the same 104 bytes, with its CRC where
 * refused_worker now is (0.3.0's adopted_worker took padding, so version 3
 * files hold it too).  Such files stay readable.
 */
#define STATE_V3_VERSION	3
#define STATE_V3_CRC_AT		offsetof(StateFileData, refused_worker)
StaticAssertDecl(sizeof(StateFileData) == 104 &&
				 offsetof(StateFileData, origin_mark) == 64 &&
				 STATE_V3_CRC_AT == 96,
				 "the layout of uidgen.state version 4 changed");

/* Wait event while the state file is written and synced (compat.h). */
static uint32 we_sync = 0;

/* CRC of the first "len" bytes of a file's contents. */
static pg_crc32c
statefile_crc(const StateFileData *d, size_t len)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, d, len);
	FIN_CRC32C(crc);
	return crc;
}

/* Is "d", "len" bytes long, a sound file of this version, 0.2.0's or 0.1.0's? */
static bool
statefile_sound(StateFileData *d, ssize_t len)
{
	pg_crc32c	v2crc;

	if (len < (ssize_t) STATE_V2_SIZE || d->magic != STATE_MAGIC)
		return false;
	if (d->version == STATE_VERSION)
		return len == sizeof(*d) && d->crc == statefile_crc(d, offsetof(StateFileData, crc));
	if (d->version == STATE_V3_VERSION)
	{
		/* 0.2.0 knew nothing of Citus: no worker id was refused */
		if (len != sizeof(*d) || d->refused_worker != statefile_crc(d, STATE_V3_CRC_AT))
			return false;
		d->refused_worker = 0;
		return true;
	}
	if (d->version != STATE_V2_VERSION || len != STATE_V2_SIZE)
		return false;
	memcpy(&v2crc, (char *) d + STATE_V2_CRC_AT, sizeof(v2crc));
	if (v2crc != statefile_crc(d, STATE_V2_CRC_AT))
		return false;
	/* 0.1.0 knew nothing of copies: it vouched for whatever server it ran on */
	memset(&d->copy_reason, 0, sizeof(*d) - offsetof(StateFileData, copy_reason));
	d->origin_worker = -1;
	return true;
}

/* Read a state file (this one, or a pg_upgrade hand-off) at "path". */
StateFileRead
statefile_read_at(const char *path, StateFileData *d)
{
	int			fd = open(path, O_RDONLY | PG_BINARY, 0);
	ssize_t		len;

	if (fd < 0 && errno == ENOENT)
		return STATE_READ_MISSING;
	len = fd < 0 ? -1 : read(fd, d, sizeof(*d));
	if (fd >= 0)
		close(fd);
	return statefile_sound(d, len) ? STATE_READ_OK : STATE_READ_CORRUPT;
}

/*
 * Write "d" durably to "path" (through a temporary file, fsync and rename),
 * stamping its header and CRC; false (after elevel) on failure.
 */
bool
statefile_write_at(const char *path, StateFileData *d, int elevel)
{
	char		tmp[MAXPGPATH];
	int			fd;
	bool		durable;
	int			save_errno;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	d->magic = STATE_MAGIC;
	d->version = STATE_VERSION;
	d->crc = statefile_crc(d, offsetof(StateFileData, crc));

	/* O_EXCL: never follow a link planted where the hand-off file goes */
	(void) unlink(tmp);
	fd = OpenTransientFile(tmp, O_WRONLY | O_CREAT | O_EXCL | PG_BINARY);
	if (fd < 0)
	{
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", tmp)));
		return false;
	}
	errno = 0;
	pgstat_report_wait_start(uidgen_wait_event(&we_sync, "UidgenStateFileSync"));
	durable = write(fd, d, sizeof(*d)) == sizeof(*d);
	if (!durable && errno == 0)
		errno = ENOSPC;
	durable = durable && pg_fsync(fd) == 0;
	pgstat_report_wait_end();
	save_errno = errno;
	CloseTransientFile(fd);
	if (!durable)
	{
		errno = save_errno;
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmp)));
		return false;
	}
	return durable_rename(tmp, path, elevel) == 0;
}
