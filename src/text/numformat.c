/*-------------------------------------------------------------------------
 *
 * numformat.c
 *	  Formatted numbers of block sequences: a format such as
 *	  'INV-{YYYY}-{n:6}{check}' turns a number and a date into text.
 *
 * The language: literal text; {{ and }} for a literal brace; {YYYY},
 * {YY}, {MM}, {DD} the date (given by the caller, in the sequence's time
 * zone); {n} the number in decimal, {n:W} zero-padded to W digits (1-19);
 * {n36} and {n36:W} the number in base 36 (0-9 then A-Z, W 1-13); {check}
 * one check character of ISO/IEC 7064 MOD 37,36 (hybrid system, alphabet
 * 0-9A-Z) over the letters and digits of the text before it, lower-case
 * letters taken as upper case, other characters skipped.
 *
 * A format is refused (22023) unless it has a number field, every {...} is
 * a known field, every brace is balanced, {check} comes once at most and
 * after a number field, and every padded number field holds max_value, the
 * largest number the sequence hands out: then every number of a sequence
 * has the same width in each field, and with the same date fields the
 * texts sort (COLLATE "C") as the numbers do.  Numbers must not be
 * negative (a formatted sequence has max_value >= 0 and start >= 0).
 *
 * Pure functions: no catalog access, no SPI (layer 0).  The SQL entry
 * points take the date from a timestamptz in a named time zone.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/timestamp.h"

#include "text/numformat.h"

PG_FUNCTION_INFO_V1(seq_format_valid);
PG_FUNCTION_INFO_V1(seq_format_number);
PG_FUNCTION_INFO_V1(seq_format_check_char);
PG_FUNCTION_INFO_V1(seq_format_finest);

static const char digits36[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/* What one step of the parser found. */
typedef enum NumFieldKind
{
	NF_END,						/* end of the format */
	NF_TEXT,					/* literal bytes */
	NF_YYYY,
	NF_YY,
	NF_MM,
	NF_DD,
	NF_N,						/* the number in decimal */
	NF_N36,						/* the number in base 36 */
	NF_CHECK					/* ISO 7064 MOD 37,36 check character */
} NumFieldKind;

typedef struct NumField
{
	NumFieldKind kind;
	int			width;			/* NF_N, NF_N36: digits, 0 for unpadded */
	const char *text;			/* NF_TEXT: the bytes; fields: the name */
	int			len;			/* bytes at text */
} NumField;

/* Report a bad format (22023) with its detail. */
static void
numformat_refuse(const char *format, const char *detail, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid number format \"%s\"", format),
			 errdetail_internal("%s", detail),
			 hint ? errhint("%s", hint) : 0));
}

/* The 1-based character position of byte offset pos, for messages. */
static int
numformat_charpos(const char *format, int pos)
{
	return pg_mbstrlen_with_len(format, pos) + 1;
}

/* Parse the width after "n:" or "n36:" (1 to max, no leading zero); -1 if bad. */
static int
numformat_width(const char *s, int len, int max)
{
	int			w = 0;

	if (len < 1 || len > 2 || s[0] == '0')
		return -1;
	for (int i = 0; i < len; i++)
	{
		if (s[i] < '0' || s[i] > '9')
			return -1;
		w = w * 10 + (s[i] - '0');
	}
	return w <= max ? w : -1;
}

/* Does name[0..len) equal the C string word? */
static bool
numformat_is(const char *name, int len, const char *word)
{
	return (int) strlen(word) == len && memcmp(name, word, len) == 0;
}

/* The next item of format from byte *pos on, advancing *pos; 22023 if bad. */
static void
numformat_next(const char *format, int *pos, NumField *f)
{
	const char *p = format + *pos;
	const char *name;
	const char *close;
	int			len;

	memset(f, 0, sizeof(*f));
	if (*p == '\0')
	{
		f->kind = NF_END;
		return;
	}
	if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}'))
	{
		f->kind = NF_TEXT;
		f->text = p;
		f->len = 1;
		*pos += 2;
		return;
	}
	if (*p == '}')
		numformat_refuse(format,
						 psprintf("The \"}\" at character %d closes no field.",
								  numformat_charpos(format, *pos)),
						 "Write \"}}\" for a literal \"}\".");
	if (*p != '{')
	{
		f->kind = NF_TEXT;
		f->text = p;
		f->len = strcspn(p, "{}");
		*pos += f->len;
		return;
	}
	name = p + 1;
	len = strcspn(name, "{}");
	close = name + len;
	if (*close != '}')
		numformat_refuse(format,
						 psprintf("The \"{\" at character %d is not closed.",
								  numformat_charpos(format, *pos)),
						 "Write \"{{\" for a literal \"{\".");
	f->text = name;
	f->len = len;
	*pos += len + 2;
	if (numformat_is(name, len, "YYYY"))
		f->kind = NF_YYYY;
	else if (numformat_is(name, len, "YY"))
		f->kind = NF_YY;
	else if (numformat_is(name, len, "MM"))
		f->kind = NF_MM;
	else if (numformat_is(name, len, "DD"))
		f->kind = NF_DD;
	else if (numformat_is(name, len, "check"))
		f->kind = NF_CHECK;
	else if (numformat_is(name, len, "n") || numformat_is(name, len, "n36"))
		f->kind = len == 1 ? NF_N : NF_N36;
	else if (len > 2 && strncmp(name, "n:", 2) == 0)
	{
		f->kind = NF_N;
		f->width = numformat_width(name + 2, len - 2, 19);
	}
	else if (len > 4 && strncmp(name, "n36:", 4) == 0)
	{
		f->kind = NF_N36;
		f->width = numformat_width(name + 4, len - 4, 13);
	}
	else
		numformat_refuse(format,
						 psprintf("The field \"{%.*s}\" is unknown.", len, name),
						 "The fields are {YYYY}, {YY}, {MM}, {DD}, {n}, {n:W}, {n36}, {n36:W} and {check}; write \"{{\" and \"}}\" for literal braces.");
	if (f->width < 0)
		numformat_refuse(format,
						 psprintf("The width of field \"{%.*s}\" is not a number from 1 to %d.",
								  len, name, f->kind == NF_N ? 19 : 13),
						 NULL);
}

/* Digits of v >= 0 in base. */
static int
numformat_digits(int64 v, int base)
{
	int			d = 1;

	while (v >= base)
	{
		v /= base;
		d++;
	}
	return d;
}

/*
 * Refuse (22023) a format that is bad, or whose padded number fields do not
 * hold max_value.
 */
void
numformat_validate(const char *format, int64 max_value)
{
	int			pos = 0;
	int			numbers = 0;
	bool		check = false;
	NumField	f;

	if (strlen(format) > NUMFORMAT_MAX_BYTES)
		numformat_refuse(format,
						 psprintf("The format is %d bytes long; at most %d are allowed.",
								  (int) strlen(format), NUMFORMAT_MAX_BYTES),
						 NULL);
	if (max_value < 0)
		numformat_refuse(format,
						 psprintf("The sequence's max_value is %lld; formatted numbers must not be negative.",
								  (long long) max_value),
						 NULL);
	for (numformat_next(format, &pos, &f); f.kind != NF_END; numformat_next(format, &pos, &f))
	{
		if (f.kind == NF_CHECK)
		{
			if (check || numbers == 0)
				numformat_refuse(format,
								 check ? "The format has more than one {check} field."
								 : "The {check} field comes before any number field.",
								 "Put one {check} after the number it protects.");
			check = true;
		}
		if (f.kind != NF_N && f.kind != NF_N36)
			continue;
		numbers++;
		if (f.width > 0 &&
			numformat_digits(max_value, f.kind == NF_N ? 10 : 36) > f.width)
			numformat_refuse(format,
							 psprintf("The field \"{%.*s}\" cannot hold max_value %lld.",
									  f.len, f.text, (long long) max_value),
							 "Give the sequence a max_value that fits the width, or a wider field, so that every number has the same width.");
	}
	if (numbers == 0)
		numformat_refuse(format, "The format has no number field.",
						 "Add {n}, {n:W}, {n36} or {n36:W}.");
}

/* Append n >= 0 in base, zero-padded to width; 22003 if it does not fit. */
static void
numformat_number(StringInfo buf, int64 n, int base, int width, const NumField *f)
{
	char		tmp[24];
	int			len = 0;

	do
	{
		tmp[len++] = digits36[n % base];
		n /= base;
	} while (n > 0);
	if (width > 0 && len > width)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("number does not fit field \"{%.*s}\"", f->len, f->text),
				 errdetail("It has %d digits.", len)));
	for (int i = len; i < width; i++)
		appendStringInfoChar(buf, '0');
	while (len > 0)
		appendStringInfoChar(buf, tmp[--len]);
}

/*
 * The ISO/IEC 7064 MOD 37,36 check character (hybrid system) of the
 * letters and digits of s[0..len): lower case taken as upper case, other
 * bytes skipped.
 */
char
numformat_iso7064_check(const char *s, int len)
{
	int			p = 36;

	for (int i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) s[i];
		int			a;
		int			sum;

		if (c >= '0' && c <= '9')
			a = c - '0';
		else if (c >= 'A' && c <= 'Z')
			a = c - 'A' + 10;
		else if (c >= 'a' && c <= 'z')
			a = c - 'a' + 10;
		else
			continue;
		sum = (p + a) % 36;
		p = ((sum == 0 ? 36 : sum) * 2) % 37;
	}
	return digits36[(37 - p) % 36];
}

/* format applied to n (>= 0) and a date; palloc'd.  22023 if format is bad. */
char *
numformat_apply(const char *format, int64 n, int year, int month, int day)
{
	StringInfoData buf;
	int			pos = 0;
	NumField	f;

	if (n < 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("a negative number cannot be formatted"),
				 errdetail("The number is %lld.", (long long) n)));
	if (year < 1 || year > 9999)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_FIELD_OVERFLOW),
				 errmsg("year %d cannot be formatted", year),
				 errdetail("Formatted numbers have years from 1 to 9999.")));
	initStringInfo(&buf);
	for (numformat_next(format, &pos, &f); f.kind != NF_END; numformat_next(format, &pos, &f))
	{
		switch (f.kind)
		{
			case NF_TEXT:
				appendBinaryStringInfo(&buf, f.text, f.len);
				break;
			case NF_YYYY:
				appendStringInfo(&buf, "%04d", year);
				break;
			case NF_YY:
				appendStringInfo(&buf, "%02d", year % 100);
				break;
			case NF_MM:
				appendStringInfo(&buf, "%02d", month);
				break;
			case NF_DD:
				appendStringInfo(&buf, "%02d", day);
				break;
			case NF_N:
				numformat_number(&buf, n, 10, f.width, &f);
				break;
			case NF_N36:
				numformat_number(&buf, n, 36, f.width, &f);
				break;
			case NF_CHECK:
				appendStringInfoChar(&buf, numformat_iso7064_check(buf.data, buf.len));
				break;
			case NF_END:
				break;
		}
	}
	return buf.data;
}

/*
 * The finest date field of a format: 0 none, 1 a year ({YYYY}, {YY}), 2 a
 * month, 3 a day; 22023 if the format is bad.
 */
static int
numformat_finest(const char *format)
{
	int			pos = 0;
	int			finest = 0;
	NumField	f;

	for (numformat_next(format, &pos, &f); f.kind != NF_END; numformat_next(format, &pos, &f))
		finest = Max(finest, f.kind == NF_YYYY || f.kind == NF_YY ? 1 :
					 f.kind == NF_MM ? 2 : f.kind == NF_DD ? 3 : 0);
	return finest;
}

/* The time zone called name; 22023 if there is none. */
pg_tz *
numformat_zone(const char *name)
{
	pg_tz	   *tz = pg_tzset(name);

	if (tz == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("time zone \"%s\" is not recognized", name),
				 errhint("Give a time zone name such as \"UTC\" or \"Europe/Berlin\" (see pg_timezone_names).")));
	return tz;
}

/*
 * seq_format_valid(format, time_zone, max_value): true, or 22023 for a bad
 * format (NULL: none) or an unknown time zone.  The CHECK of id_sequences.
 */
Datum
seq_format_valid(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		PG_RETURN_NULL();
	numformat_zone(text_to_cstring(PG_GETARG_TEXT_PP(1)));
	if (!PG_ARGISNULL(0))
		numformat_validate(text_to_cstring(PG_GETARG_TEXT_PP(0)), PG_GETARG_INT64(2));
	PG_RETURN_BOOL(true);
}

/*
 * seq_format_number(format, time_zone, n, at): n formatted, with the date
 * of "at" in time_zone.
 */
Datum
seq_format_number(PG_FUNCTION_ARGS)
{
	char	   *format = text_to_cstring(PG_GETARG_TEXT_PP(0));
	pg_tz	   *tz = numformat_zone(text_to_cstring(PG_GETARG_TEXT_PP(1)));
	int64		n = PG_GETARG_INT64(2);
	TimestampTz at = PG_GETARG_TIMESTAMPTZ(3);
	struct pg_tm tm;
	fsec_t		fsec;
	int			offset;

	if (TIMESTAMP_NOT_FINITE(at) ||
		timestamp2tm(at, &offset, &tm, &fsec, NULL, tz) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range")));
	PG_RETURN_TEXT_P(cstring_to_text(numformat_apply(format, n, tm.tm_year, tm.tm_mon, tm.tm_mday)));
}

/* seq_format_check_char(s): the ISO 7064 MOD 37,36 check character of s. */
Datum
seq_format_check_char(PG_FUNCTION_ARGS)
{
	char	   *s = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char		c = numformat_iso7064_check(s, strlen(s));

	PG_RETURN_TEXT_P(cstring_to_text_with_len(&c, 1));
}

/* seq_format_finest(format): numformat_finest(), 0 for no format (NULL). */
Datum
seq_format_finest(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		PG_RETURN_INT32(0);
	PG_RETURN_INT32(numformat_finest(text_to_cstring(PG_GETARG_TEXT_PP(0))));
}
