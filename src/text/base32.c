/*-------------------------------------------------------------------------
 *
 * base32.c
 *	  Crockford's base32 (0-9 and A-Z without I, L, O, U) for the
 *	  fixed-width text forms of ULID, TypeID and snowflake IDs.
 *
 * The value is written most significant bits first, padded with zero bits
 * on the left to a multiple of five: 130 bits for a UUID (26 characters),
 * 65 for a non-negative int64 (13).  The alphabet is in ascending ASCII
 * order, so with a fixed width and one case the text sorts (COLLATE "C")
 * as the value does; and since the two padding bits are zero, the first
 * character is at most '7': a decoder rejects '8' to 'Z' there as an
 * overflow, as the ULID and TypeID specifications require.  Decoders
 * never map Crockford's look-alikes (I, L to 1; O to 0) nor skip hyphens:
 * the TypeID specification forbids both, and one value then has one text.
 *
 * Errors are 22P02 and name the offending character, its position (in
 * characters, from 1, in the whole input) or the wrong length.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"

#include "text/base32.h"

static const char upper_digits[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
static const char lower_digits[] = "0123456789abcdefghjkmnpqrstvwxyz";

/* The value of a character, -1 if not in the alphabet in that case. */
static inline int
base32_value(unsigned char c, Base32Case accept)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (accept == BASE32_ANY_CASE && c >= 'A' && c <= 'Z')
		c = c - 'A' + 'a';
	if (c < 'a' || c > 'z')
		return -1;
	/* a-h: 10-17, j k: 18 19, m n: 20 21, p-t: 22-26, v-z: 27-31 */
	switch (c)
	{
		case 'i':
		case 'l':
		case 'o':
		case 'u':
			return -1;
		default:
			break;
	}
	return 10 + (c - 'a') - (c > 'i') - (c > 'l') - (c > 'o') - (c > 'u');
}

/* The 26 characters of a 16-byte UUID, NUL-terminated into out[27]. */
void
base32_encode_uuid(const unsigned char *uuid16, bool upper, char *out)
{
	const char *digits = upper ? upper_digits : lower_digits;
	uint64		hi = 0;
	uint64		lo = 0;

	for (int i = 0; i < 8; i++)
	{
		hi = (hi << 8) | uuid16[i];
		lo = (lo << 8) | uuid16[i + 8];
	}
	for (int k = 0; k < BASE32_UUID_CHARS; k++)
	{
		int			s = 125 - 5 * k;	/* the chunk's lowest bit */
		uint64		v;

		if (s >= 64)
			v = hi >> (s - 64);
		else if (s > 59)
			v = (lo >> s) | (hi << (64 - s));
		else
			v = lo >> s;
		out[k] = digits[v & 31];
	}
	out[BASE32_UUID_CHARS] = '\0';
}

/* The 13 characters of a non-negative int64, NUL-terminated into out[14]. */
void
base32_encode_int64(int64 v, bool upper, char *out)
{
	const char *digits = upper ? upper_digits : lower_digits;
	uint64		u = (uint64) v;

	Assert(v >= 0);
	for (int k = BASE32_INT64_CHARS - 1; k >= 0; k--)
	{
		out[k] = digits[u & 31];
		u >>= 5;
	}
	out[BASE32_INT64_CHARS] = '\0';
}

/*
 * Report the character at "at" (a position in input) as not expected there:
 * shown whole if multibyte, its position counted in characters from 1.
 */
static void
base32_bad_char(const char *what, const char *input, const char *at,
				const char *expected)
{
	int			pos = pg_mbstrlen_with_len(input, at - input) + 1;
	int			len = pg_mbcharcliplen(at, strlen(at), 1);

	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid character \"%.*s\" at position %d of %s \"%s\"",
					len, at, pos, what, input),
			 errdetail("%s", expected)));
}

/*
 * Check the length of an encoded value: exactly "want" characters; s is
 * all of input, or its suffix when a prefix precedes it (TypeID).
 */
static void
base32_check_length(const char *what, const char *input, const char *s,
					int len, int want)
{
	int			chars;

	/* as many bytes: a multibyte character among them is a bad digit */
	if (len == want)
		return;
	chars = pg_mbstrlen_with_len(s, len);
	if (chars == want)
		return;
	if (s == input)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid %s \"%s\": %d characters where %d are expected",
						what, input, chars, want),
				 errdetail("The value is written in exactly %d characters of Crockford's base32.",
						   want)));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid %s \"%s\": its suffix has %d characters where %d are expected",
					what, input, chars, want),
			 errdetail("The suffix is written in exactly %d characters of Crockford's base32.",
					   want)));
}

/* The digit values of s (len bytes, "want" characters), or an error. */
static void
base32_digits(const char *what, const char *input, const char *s, int len,
			  int want, Base32Case accept, uint8 *vals)
{
	const char *expected = accept == BASE32_LOWER_ONLY ?
		"Its digits are 0-9 and a-z without i, l, o and u, in lower case." :
		"Its digits are 0-9 and A-Z without I, L, O and U, in either case.";

	base32_check_length(what, input, s, len, want);
	for (int k = 0; k < want; k++)
	{
		int			v = base32_value((unsigned char) s[k], accept);

		if (v < 0)
			base32_bad_char(what, input, s + k, expected);
		vals[k] = (uint8) v;
	}
	/* the two padding bits must be zero */
	if (vals[0] > 7)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid character \"%c\" at position %d of %s \"%s\": the value overflows",
						s[0], pg_mbstrlen_with_len(input, s - input) + 1, what, input),
				 errdetail("The first character is 0 to 7: %d characters hold %d bits, of which only %d are used.",
						   want, want * 5, want * 5 - 2)));
}

/*
 * Decode the 26 characters s[0..len) of input (all of it, or its suffix)
 * into a 16-byte UUID; "what" names the form in errors (ULID, TypeID).
 */
void
base32_decode_uuid(const char *what, const char *input, const char *s,
				   int len, Base32Case accept,
				   unsigned char *uuid16)
{
	uint8		vals[BASE32_UUID_CHARS];
	uint64		hi = 0;
	uint64		lo = 0;

	base32_digits(what, input, s, len, BASE32_UUID_CHARS, accept, vals);
	for (int k = 0; k < BASE32_UUID_CHARS; k++)
	{
		hi = (hi << 5) | (lo >> 59);
		lo = (lo << 5) | vals[k];
	}
	for (int i = 0; i < 8; i++)
	{
		uuid16[i] = (unsigned char) (hi >> (56 - 8 * i));
		uuid16[i + 8] = (unsigned char) (lo >> (56 - 8 * i));
	}
}

/* Decode the 13 characters s[0..len) of input into a non-negative int64. */
int64
base32_decode_int64(const char *what, const char *input, const char *s,
					int len, Base32Case accept)
{
	uint8		vals[BASE32_INT64_CHARS];
	uint64		u = 0;

	base32_digits(what, input, s, len, BASE32_INT64_CHARS, accept, vals);
	for (int k = 0; k < BASE32_INT64_CHARS; k++)
		u = (u << 5) | vals[k];
	return (int64) u;
}
