/*-------------------------------------------------------------------------
 *
 * period.c
 *	  Numbering per period: which period a moment falls in, and the numbers
 *	  of a block sequence that restarts every period (id_sequences.reset).
 *
 * A period is a year, a month or a day in the sequence's time zone; its key
 * is YYYY, YYYYMM or YYYYMMDD, so keys of one reset have the same number of
 * digits and grow with time.  A number of such a sequence is the key
 * followed by the count in as many digits as max_value has (the CHECK of
 * id_sequences keeps that within 18 digits): numbers of different periods
 * never collide, and they sort by period, then count.  The row keeps the
 * count (next_block_start) and the key of its period; the allocator
 * (allocsql.c) and gapless numbers (gapless.c) restart the count when the
 * key of the moment they take numbers is later than the row's, and refuse
 * (22008) when it is earlier.
 *
 * Pure functions: no catalog access, no SPI.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/timestamp.h"

#include "blocks/period.h"
#include "text/numformat.h"

PG_FUNCTION_INFO_V1(seq_period_key);

/* The key of the period of reset "unit" (y, m, d) "at" falls in, in tz. */
static int32
period_key_in(char unit, pg_tz *tz, TimestampTz at)
{
	struct pg_tm tm;
	fsec_t		fsec;
	int			offset;

	if (TIMESTAMP_NOT_FINITE(at) ||
		timestamp2tm(at, &offset, &tm, &fsec, NULL, tz) != 0 ||
		tm.tm_year < 1000 || tm.tm_year > 9999)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for numbering per period"),
				 errdetail("Periods are numbered in the years 1000 to 9999.")));
	if (unit == 'y')
		return tm.tm_year;
	if (unit == 'm')
		return tm.tm_year * 100 + tm.tm_mon;
	return (tm.tm_year * 100 + tm.tm_mon) * 100 + tm.tm_mday;
}

/*
 * The edge of the period of key between "in" (in it) and "out" (not in
 * it), to the microsecond: the first moment not in it if out is later,
 * else the first moment in it.  By bisection, so that no time zone rule
 * (a day of 23 or 25 hours, a midnight that does not exist or comes
 * twice) can put a moment of another period inside.
 */
static TimestampTz
period_edge(char unit, pg_tz *tz, int32 key, TimestampTz in, TimestampTz out)
{
	while (in - out > 1 || out - in > 1)
	{
		TimestampTz mid = in + (out - in) / 2;

		if (period_key_in(unit, tz, mid) == key)
			in = mid;
		else
			out = mid;
	}
	return out > in ? out : in;
}

/*
 * The period "at" falls in, in time_zone, into *p: its key (YYYY, YYYYMM or
 * YYYYMMDD; 0 for reset 'none', with no bounds) and its first moment and
 * the first moment after it.  22023 for an unknown reset or zone, 22008
 * for a moment outside the years 1000 to 9999.
 */
void
period_of(const char *reset, const char *time_zone, TimestampTz at, Period *p)
{
	char		unit = strcmp(reset, "year") == 0 ? 'y' :
		strcmp(reset, "month") == 0 ? 'm' : strcmp(reset, "day") == 0 ? 'd' : 0;
	/* beyond the longest period, whatever the zone */
	int64		span = (unit == 'y' ? 367 : unit == 'm' ? 32 : 2) * USECS_PER_DAY;
	pg_tz	   *tz;

	memset(p, 0, sizeof(*p));
	if (strcmp(reset, "none") == 0)
		return;
	if (unit == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown reset \"%s\"", reset),
				 errhint("A block sequence restarts every \"year\", \"month\" or \"day\", or never (\"none\").")));
	tz = numformat_zone(time_zone);
	p->key = period_key_in(unit, tz, at);
	p->start = period_edge(unit, tz, p->key, at, at - span);
	p->end = period_edge(unit, tz, p->key, at, at + span);
}

/*
 * The number of count n in the period of key, for a sequence whose
 * max_value (>= 0) has d digits: key * 10^d + n.
 */
int64
period_number(int32 key, int64 max_value, int64 n)
{
	int64		scale = 1;

	do
	{
		scale *= 10;
		max_value /= 10;
	} while (max_value > 0);
	return key * scale + n;
}

/* seq_period_key(reset, time_zone, at): the key of period_of(), NULL for 'none'. */
Datum
seq_period_key(PG_FUNCTION_ARGS)
{
	Period		p;

	period_of(text_to_cstring(PG_GETARG_TEXT_PP(0)), text_to_cstring(PG_GETARG_TEXT_PP(1)),
			  PG_GETARG_TIMESTAMPTZ(2), &p);
	if (p.key == 0)
		PG_RETURN_NULL();
	PG_RETURN_INT32(p.key);
}
