/*-------------------------------------------------------------------------
 *
 * typeid.c
 *	  TypeIDs (https://github.com/jetify-com/typeid, spec/README.md,
 *	  version 0.3.0): a type prefix, '_', and a UUID in 26 characters of
 *	  lower-case Crockford base32.
 *
 * The prefix is at most 63 characters of [a-z_], starting and ending with
 * a letter, or empty (then without the separator).  Since the prefix may
 * hold '_', the separator is the last '_' of the text.  The suffix is the
 * UUID's 128 bits as in a ULID, but strictly lower case; its first
 * character is at most '7'.  Any UUID version is accepted, as the
 * specification allows for bits given by users.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/uuid.h"

#include "text/base32.h"

#define TYPEID_MAX_PREFIX 63

PG_FUNCTION_INFO_V1(uuid_to_typeid);
PG_FUNCTION_INFO_V1(typeid_to_uuid);
PG_FUNCTION_INFO_V1(typeid_to_uuid_of_type);
PG_FUNCTION_INFO_V1(typeid_prefix);

/* A parsed TypeID: its prefix (palloc'd) and UUID. */
typedef struct TypeId
{
	char	   *prefix;
	pg_uuid_t  *uuid;
} TypeId;

/*
 * Check a prefix p[0..len) of input (which begins at input) against the
 * specification; "what" names the input in errors and errcode is the
 * SQLSTATE to raise.
 */
static void
typeid_check_prefix(const char *what, const char *input, const char *p,
					int len, int errcode_value)
{
	for (int i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) p[i];
		bool		edge = (i == 0 || i == len - 1);

		if ((c >= 'a' && c <= 'z') || (c == '_' && !edge))
			continue;
		ereport(ERROR,
				(errcode(errcode_value),
				 errmsg("invalid character \"%.*s\" at position %d of %s \"%s\"",
						pg_mbcharcliplen(p + i, strlen(p + i), 1), p + i,
						pg_mbstrlen_with_len(input, p + i - input) + 1, what, input),
				 c == '_' ?
				 errdetail("A TypeID prefix starts and ends with a letter (a-z); with an empty prefix the separator is omitted.") :
				 errdetail("A TypeID prefix holds only the lower-case letters a-z and _.")));
	}
	if (len > TYPEID_MAX_PREFIX)
		ereport(ERROR,
				(errcode(errcode_value),
				 errmsg("invalid %s \"%s\": the prefix has %d characters, more than %d",
						what, input, len, TYPEID_MAX_PREFIX),
				 errdetail("A TypeID prefix is empty or 1 to 63 characters of a-z and _, starting and ending with a letter.")));
}

/* Parse a TypeID; 22P02 naming the character, position or length. */
static TypeId
typeid_parse(const char *s)
{
	TypeId		t;
	const char *sep = strrchr(s, '_');
	const char *suffix = sep ? sep + 1 : s;

	t.prefix = sep ? pnstrdup(s, sep - s) : pstrdup("");
	if (sep == s)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid character \"_\" at position 1 of TypeID \"%s\"", s),
				 errdetail("A TypeID with an empty prefix has no separator: it is the 26 characters of its suffix alone.")));
	if (sep)
		typeid_check_prefix("TypeID", s, s, sep - s,
							ERRCODE_INVALID_TEXT_REPRESENTATION);
	t.uuid = palloc(sizeof(pg_uuid_t));
	base32_decode_uuid("TypeID", s, suffix, strlen(suffix),
					   BASE32_LOWER_ONLY, t.uuid->data);
	return t;
}

/* uuid_to_typeid(prefix text, uuid) → text; a bad prefix is 22023. */
Datum
uuid_to_typeid(PG_FUNCTION_ARGS)
{
	char	   *prefix = text_to_cstring(PG_GETARG_TEXT_PP(0));
	pg_uuid_t  *u = PG_GETARG_UUID_P(1);
	int			plen = strlen(prefix);
	char	   *out = palloc(plen + 1 + BASE32_UUID_CHARS + 1);
	char	   *p = out;

	typeid_check_prefix("TypeID prefix", prefix, prefix, plen,
						ERRCODE_INVALID_PARAMETER_VALUE);
	if (plen > 0)
	{
		memcpy(p, prefix, plen);
		p[plen] = '_';
		p += plen + 1;
	}
	base32_encode_uuid(u->data, false, p);
	PG_RETURN_TEXT_P(cstring_to_text(out));
}

/* typeid_to_uuid(text) → uuid: the UUID of a TypeID of any type. */
Datum
typeid_to_uuid(PG_FUNCTION_ARGS)
{
	TypeId		t = typeid_parse(text_to_cstring(PG_GETARG_TEXT_PP(0)));

	PG_RETURN_UUID_P(t.uuid);
}

/* typeid_to_uuid(text, prefix text) → uuid: 22P02 unless of that type. */
Datum
typeid_to_uuid_of_type(PG_FUNCTION_ARGS)
{
	char	   *s = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *want = text_to_cstring(PG_GETARG_TEXT_PP(1));
	TypeId		t = typeid_parse(s);

	if (strcmp(t.prefix, want) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("TypeID \"%s\" has the prefix \"%s\", not \"%s\"",
						s, t.prefix, want),
				 errdetail("The prefix names the type of the ID; an ID of another type is not accepted here.")));
	PG_RETURN_UUID_P(t.uuid);
}

/* typeid_prefix(text) → text: the prefix of a valid TypeID ('' if none). */
Datum
typeid_prefix(PG_FUNCTION_ARGS)
{
	TypeId		t = typeid_parse(text_to_cstring(PG_GETARG_TEXT_PP(0)));

	PG_RETURN_TEXT_P(cstring_to_text(t.prefix));
}
