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
#include "funcapi.h"
#include "access/htup_details.h"
#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/timestamp.h"

#include "blocks/period.h"
#include "text/numformat.h"

PG_FUNCTION_INFO_V1(seq_period_key);
PG_FUNCTION_INFO_V1(seq_period_bounds);

/*
 * The key of the period of reset "unit" (y, m, d) "at" falls in, in tz; -1
 * outside the years 1000 to 9999 (keys have 4, 6 or 8 digits).
 */
static int32
period_key_in(char unit, pg_tz *tz, TimestampTz at)
{
	struct pg_tm tm;
	fsec_t		fsec;
	int			offset;

	if (TIMESTAMP_NOT_FINITE(at) ||
		timestamp2tm(at, &offset, &tm, &fsec, NULL, tz) != 0 ||
		tm.tm_year < 1000 || tm.tm_year > 9999)
		return -1;
	if (unit == 'y')
		return tm.tm_year;
	if (unit == 'm')
		return tm.tm_year * 100 + tm.tm_mon;
	return (tm.tm_year * 100 + tm.tm_mon) * 100 + tm.tm_mday;
}

/*
 * The edge of the period of key between "in" (in it) and "out" (not in
 * it), to the microsecond, by bisection: the first moment not in it if out
 * is later, else the first moment in it.  Exact where tz keeps one UTC
 * offset from in to out: local time then only moves forward, so the
 * moments of one key are one stretch.
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

/* The second of ts, rounded down (timestamptz_to_time_t() rounds toward 0). */
static pg_time_t
period_second(TimestampTz ts)
{
	pg_time_t	sec = timestamptz_to_time_t(ts);

	return time_t_to_timestamptz(sec) > ts ? sec - 1 : sec;
}

/*
 * Where tz keeps the UTC offset it has at "at", within lo..hi: *from, the
 * first moment with it, and *until, the first moment after, from the
 * zone's transitions (DST, or a change of offset such as one that brings a
 * date back: Antarctica/Casey on 2010-03-05).
 */
static void
period_same_offset(pg_tz *tz, TimestampTz at, TimestampTz lo, TimestampTz hi,
				   TimestampTz *from, TimestampTz *until)
{
	pg_time_t	t = period_second(lo);
	pg_time_t	at_sec = period_second(at);
	pg_time_t	boundary;
	long int	before_off;
	long int	after_off;
	int			before_dst;
	int			after_dst;

	*from = lo;
	*until = hi;
	/* (a bounded walk: a zone changes offset a few times a year) */
	for (int i = 0; i < 1000; i++)
	{
		/*
		 * (on the last transition of the zone's table, none is found
		 * after it, though its rules go on: look from the next second)
		 */
		if (pg_next_dst_boundary(&t, &before_off, &before_dst, &boundary,
								 &after_off, &after_dst, tz) != 1 &&
			(i == 0 || pg_next_dst_boundary(&(pg_time_t) {t + 1}, &before_off, &before_dst,
											&boundary, &after_off, &after_dst, tz) != 1))
			return;
		if (boundary <= t)
			return;
		if (boundary > at_sec)
		{
			*until = Min(hi, time_t_to_timestamptz(boundary));
			return;
		}
		*from = Max(lo, time_t_to_timestamptz(boundary));
		t = boundary;
	}
	/* a zone this busy: at alone is certain */
	*from = at;
	*until = at + 1;
}

/*
 * The period "at" falls in, in time_zone, into *p: its key (YYYY, YYYYMM or
 * YYYYMMDD; 0 for reset 'none', with no bounds), a moment at or before at
 * from which every moment up to at is in it (start), and the first moment
 * after at that is not, or at which the zone's UTC offset changes (end).
 * So every moment of [start, end) is in the period, whatever the zone's
 * rules (a day of 23 or 25 hours, a midnight that does not exist, comes
 * twice or comes back); the bounds are exact but at a change of offset
 * within the period, where the cache merely refills early.  22023 for an
 * unknown reset or zone, 22008 for a moment outside the years 1000 to
 * 9999.
 */
void
period_of(const char *reset, const char *time_zone, TimestampTz at, Period *p)
{
	char		unit = strcmp(reset, "year") == 0 ? 'y' :
		strcmp(reset, "month") == 0 ? 'm' : strcmp(reset, "day") == 0 ? 'd' : 0;
	/* beyond the longest period, whatever the zone */
	int64		span = (unit == 'y' ? 367 : unit == 'm' ? 32 : 2) * USECS_PER_DAY;
	pg_tz	   *tz;
	TimestampTz from;
	TimestampTz until;

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
	if (p->key < 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for numbering per period"),
				 errdetail("Periods are numbered in the years 1000 to 9999.")));
	period_same_offset(tz, at, at - span, at + span, &from, &until);
	p->start = period_key_in(unit, tz, from) == p->key ? from :
		period_edge(unit, tz, p->key, at, from);
	p->end = period_key_in(unit, tz, until - 1) == p->key ? until :
		period_edge(unit, tz, p->key, at, until - 1);
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

/*
 * seq_period_bounds(reset, time_zone, at): the key of period_of(), and the
 * bounds the cache carves within (NULLs for 'none').
 */
Datum
seq_period_bounds(PG_FUNCTION_ARGS)
{
	Period		p;
	TupleDesc	desc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "seq_period_bounds: return type must be a row type");
	period_of(text_to_cstring(PG_GETARG_TEXT_PP(0)), text_to_cstring(PG_GETARG_TEXT_PP(1)),
			  PG_GETARG_TIMESTAMPTZ(2), &p);
	values[0] = Int32GetDatum(p.key);
	values[1] = TimestampTzGetDatum(p.start);
	values[2] = TimestampTzGetDatum(p.end);
	nulls[0] = nulls[1] = nulls[2] = p.key == 0;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}
