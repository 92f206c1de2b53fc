/*-------------------------------------------------------------------------
 *
 * uuidv7.c
 *	  RFC 9562 version 7 UUIDs, ordered across every backend of the server.
 *
 * Bit layout (bit 0 is the most significant of the 128):
 *	  0-47	 unix_ts_ms: milliseconds since the Unix epoch
 *	 48-51	 version, 0111
 *	 52-63	 rand_a: the top 12 bits of a 20-bit sub-millisecond fraction
 *	 64-65	 variant, 10
 *	 66-73	 the low 8 bits of the fraction
 *	 74-127  54 random bits
 * The millisecond and the fraction are one tick of the shared logical
 * clock (clock.c): the precise wall clock in units of 2^-20 ms (about
 * 0.95 ns), or the previous tick plus one when calls come faster (RFC 9562
 * section 6.2, method 3 with a counter fallback), so UUIDs are strictly
 * increasing across the server and never limited to a rate per millisecond.
 *
 * uuidv7_next(shift) takes its tick from the same clock and adds the shift
 * (a fixed number of ticks for a given duration), so its UUIDs are strictly
 * increasing among calls that add the same duration.
 *
 * uidgen_uuid_extract_version() and uidgen_uuid_extract_timestamp() behave as
 * PostgreSQL 18's uuid_extract_version() and uuid_extract_timestamp(), which
 * servers before 17 lack: NULL for what they cannot read.
 *
 * Random bits come from pg_strong_random() in blocks of RANDOM_BLOCK bytes
 * per backend; the block belongs to the process that drew it, so two
 * backends never share a stream even across fork.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/fmgrprotos.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "clock/statefile.h"
#include "core/counters.h"
#include "core/settings.h"
#include "core/shmem.h"
#include "core/timeconv.h"
#include "replicas/copies.h"

#define RANDOM_BLOCK 4096
#define FRACTION_MASK (UIDGEN_TICKS_PER_MS - 1)
#define UUID_MAX_MS ((INT64CONST(1) << 48) - 1)
/* date2j(1582, 10, 15): version 1 UUIDs count 100 ns from this day */
#define GREGORIAN_EPOCH_JDATE INT64CONST(2299161)

PG_FUNCTION_INFO_V1(uuidv7_next);
PG_FUNCTION_INFO_V1(uuidv7_next_shift);
PG_FUNCTION_INFO_V1(uuidv7_at);
PG_FUNCTION_INFO_V1(uuidv7_timestamp);
PG_FUNCTION_INFO_V1(uuidv7_floor);
PG_FUNCTION_INFO_V1(uidgen_uuid_extract_version);
PG_FUNCTION_INFO_V1(uidgen_uuid_extract_timestamp);

static uint8 random_block[RANDOM_BLOCK];
static int	random_used = RANDOM_BLOCK;
static int	random_owner = 0;	/* pid that drew random_block */

/* Take n fresh random bytes from this backend's block. */
static const uint8 *
random_take(int n)
{
	const uint8 *p;

	if (unlikely(random_used + n > RANDOM_BLOCK || random_owner != MyProcPid))
	{
		if (!pg_strong_random(random_block, RANDOM_BLOCK))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate random values")));
		random_used = 0;
		random_owner = MyProcPid;
	}
	p = random_block + random_used;
	random_used += n;
	return p;
}

/* A v7 UUID for a millisecond and a 20-bit fraction; random bits after. */
static pg_uuid_t *
uuidv7_build(uint64 ms, uint32 fraction, const uint8 *random7)
{
	pg_uuid_t  *u = palloc(sizeof(pg_uuid_t));
	uint8	   *b = u->data;

	for (int i = 0; i < 6; i++)
		b[i] = (uint8) (ms >> (40 - 8 * i));
	b[6] = 0x70 | ((fraction >> 16) & 0x0F);
	b[7] = (uint8) (fraction >> 8);
	b[8] = 0x80 | ((fraction >> 2) & 0x3F);
	b[9] = (uint8) ((fraction & 0x03) << 6) | (random7[0] & 0x3F);
	memcpy(b + 10, random7 + 1, 6);
	return u;
}

/* The Unix millisecond of a timestamptz argument, in the UUIDv7 range. */
static uint64
uuidv7_ms_arg(TimestampTz ts)
{
	int64		ms;

	if (!timestamptz_to_unix_ms(ts, &ms) || ms < 0 || ms > UUID_MAX_MS)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for UUIDv7: \"%s\"",
						timestamptz_to_str(ts)),
				 errdetail("A version 7 UUID holds instants from 1970-01-01 00:00:00+00 to 10889-08-02 05:31:50.655+00.")));
	return (uint64) ms;
}

/* The next tick of the UUID clock, counted in the status. */
static uint64
uuidv7_tick(void)
{
	uint64		tick;
	bool		pending;

	shmem_require();
	pending = copies_rebase_pending();
	statefile_check_usable();
	copies_guard();
	tick = statefile_next_tick(UIDGEN_CLOCK_UUID, 1, true);
	/* taken in recovery, but recovery has ended since: take one above the jump */
	if (unlikely(pending) && !RecoveryInProgress())
	{
		copies_guard();
		tick = statefile_next_tick(UIDGEN_CLOCK_UUID, 1, true);
	}
	counters_count_uuid();
	return tick;
}

/* uuidv7(): the next UUID of this server, above every one before it. */
Datum
uuidv7_next(PG_FUNCTION_ARGS)
{
	uint64		tick = uuidv7_tick();

	PG_RETURN_UUID_P(uuidv7_build(UIDGEN_TICKS_TO_MS(tick),
								  (uint32) (tick & FRACTION_MASK),
								  random_take(7)));
}

/*
 * uuidv7_next(shift): the next tick of the UUID clock plus the duration
 * that shift adds to its millisecond (months and days counted as
 * timestamptz + interval counts them), rounded down to a tick.
 */
Datum
uuidv7_next_shift(PG_FUNCTION_ARGS)
{
	Interval   *shift = PG_GETARG_INTERVAL_P(0);
	uint64		tick = uuidv7_tick();
	TimestampTz at = unix_ms_to_timestamptz((int64) UIDGEN_TICKS_TO_MS(tick));
	TimestampTz shifted;
	int64		delta_us;
	int64		delta_ms;
	int64		fraction;
	int64		ms;

	shifted = DatumGetTimestampTz(DirectFunctionCall2(timestamptz_pl_interval,
													  TimestampTzGetDatum(at),
													  IntervalPGetDatum(shift)));
	if (TIMESTAMP_NOT_FINITE(shifted))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("shifted timestamp out of range for UUIDv7"),
				 errdetail("The shift must be finite.")));
	delta_us = shifted - at;
	delta_ms = delta_us >= 0 ? delta_us / 1000 : -((-delta_us + 999) / 1000);
	fraction = (int64) (tick & FRACTION_MASK) +
		(delta_us - delta_ms * 1000) * (int64) UIDGEN_TICKS_PER_MS / 1000;
	ms = (int64) UIDGEN_TICKS_TO_MS(tick) + delta_ms + (fraction >> UIDGEN_TICK_SHIFT);
	if (ms < 0 || ms > UUID_MAX_MS)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("shifted timestamp out of range for UUIDv7: \"%s\"",
						timestamptz_to_str(shifted)),
				 errdetail("A version 7 UUID holds instants from 1970-01-01 00:00:00+00 to 10889-08-02 05:31:50.655+00.")));
	PG_RETURN_UUID_P(uuidv7_build((uint64) ms, (uint32) (fraction & FRACTION_MASK),
								  random_take(7)));
}

/* uuidv7(ts): a UUID of the millisecond holding ts, random within it. */
Datum
uuidv7_at(PG_FUNCTION_ARGS)
{
	uint64		ms = uuidv7_ms_arg(PG_GETARG_TIMESTAMPTZ(0));
	const uint8 *r = random_take(10);
	uint32		fraction = ((uint32) r[0] << 16 | (uint32) r[1] << 8 | r[2]) & FRACTION_MASK;

	PG_RETURN_UUID_P(uuidv7_build(ms, fraction, r + 3));
}

/* The unix_ts_ms field of a UUID, as a timestamptz. */
static TimestampTz
uuidv7_time_of(const pg_uuid_t *u)
{
	int64		ms = 0;

	for (int i = 0; i < 6; i++)
		ms = (ms << 8) | u->data[i];
	return unix_ms_to_timestamptz(ms);
}

/* uuidv7_timestamp(u): the millisecond of a version 7 UUID. */
Datum
uuidv7_timestamp(PG_FUNCTION_ARGS)
{
	pg_uuid_t  *u = PG_GETARG_UUID_P(0);

	if ((u->data[6] >> 4) != 7 || (u->data[8] >> 6) != 2)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("UUID is not an RFC 9562 version 7 UUID"),
				 errdetail("Its version is %d and its variant bits are %d%d; only version 7 with variant 10 holds a timestamp.",
						   u->data[6] >> 4, (u->data[8] >> 7) & 1, (u->data[8] >> 6) & 1)));
	PG_RETURN_TIMESTAMPTZ(uuidv7_time_of(u));
}

/* uuidv7_floor(ts): the smallest version 7 UUID of the millisecond of ts. */
Datum
uuidv7_floor(PG_FUNCTION_ARGS)
{
	static const uint8 zeros[7] = {0};

	PG_RETURN_UUID_P(uuidv7_build(uuidv7_ms_arg(PG_GETARG_TIMESTAMPTZ(0)), 0, zeros));
}

/* uuid_extract_version(u): the version of an RFC 9562 UUID, else NULL. */
Datum
uidgen_uuid_extract_version(PG_FUNCTION_ARGS)
{
	pg_uuid_t  *u = PG_GETARG_UUID_P(0);

	if ((u->data[8] >> 6) != 2)
		PG_RETURN_NULL();
	PG_RETURN_INT16((int16) (u->data[6] >> 4));
}

/*
 * uuid_extract_timestamp(u): the instant of an RFC 9562 version 1 UUID (to
 * the microsecond) or version 7 UUID (to the millisecond), else NULL.
 */
Datum
uidgen_uuid_extract_timestamp(PG_FUNCTION_ARGS)
{
	pg_uuid_t  *u = PG_GETARG_UUID_P(0);
	int			version = u->data[6] >> 4;
	uint64		hundred_ns;

	if ((u->data[8] >> 6) != 2)
		PG_RETURN_NULL();
	if (version == 7)
		PG_RETURN_TIMESTAMPTZ(uuidv7_time_of(u));
	if (version != 1)
		PG_RETURN_NULL();

	/* time_low (bytes 0-3), time_mid (4-5), time_high (low 12 bits of 6-7) */
	hundred_ns = ((uint64) (u->data[6] & 0x0F) << 56) | ((uint64) u->data[7] << 48) |
		((uint64) u->data[4] << 40) | ((uint64) u->data[5] << 32) |
		((uint64) u->data[0] << 24) | ((uint64) u->data[1] << 16) |
		((uint64) u->data[2] << 8) | (uint64) u->data[3];
	PG_RETURN_TIMESTAMPTZ((TimestampTz) (hundred_ns / 10) -
						  (POSTGRES_EPOCH_JDATE - GREGORIAN_EPOCH_JDATE) * USECS_PER_DAY);
}
