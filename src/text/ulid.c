/*-------------------------------------------------------------------------
 *
 * ulid.c
 *	  uuid_to_ulid() and ulid_to_uuid(): a UUID's 128 bits as a ULID, 26
 *	  characters of Crockford's base32 (https://github.com/ulid/spec).
 *
 * A ULID and a UUID are the same 128 bits in the same byte order, so a
 * UUIDv7's ULID has its millisecond in the first 10 characters, as a ULID
 * generated as such would.  Output is upper case, the canonical form;
 * input is accepted in either case.  The first character is at most '7'
 * (26 characters hold 130 bits): '8' to 'Z' there is rejected as an
 * overflow, as the specification requires.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/uuid.h"

#include "text/base32.h"

PG_FUNCTION_INFO_V1(uuid_to_ulid);
PG_FUNCTION_INFO_V1(ulid_to_uuid);

/* uuid_to_ulid(uuid) → text: the ULID of a UUID, upper case. */
Datum
uuid_to_ulid(PG_FUNCTION_ARGS)
{
	pg_uuid_t  *u = PG_GETARG_UUID_P(0);
	char		out[BASE32_UUID_CHARS + 1];

	base32_encode_uuid(u->data, true, out);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(out, BASE32_UUID_CHARS));
}

/* ulid_to_uuid(text) → uuid: the UUID of a ULID, in either case; 22P02. */
Datum
ulid_to_uuid(PG_FUNCTION_ARGS)
{
	char	   *s = text_to_cstring(PG_GETARG_TEXT_PP(0));
	pg_uuid_t  *u = palloc(sizeof(pg_uuid_t));

	base32_decode_uuid("ULID", s, s, strlen(s), BASE32_ANY_CASE, u->data);
	PG_RETURN_UUID_P(u);
}
