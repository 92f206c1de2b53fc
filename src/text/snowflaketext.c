/*-------------------------------------------------------------------------
 *
 * snowflaketext.c
 *	  snowflake_to_text() and text_to_snowflake(): a snowflake ID as 13
 *	  characters of Crockford's base32, for JavaScript and JSON clients.
 *
 * JavaScript's Number holds integers exactly only up to 2^53; snowflake
 * IDs pass that weeks after the epoch.  id::text is always exact; this
 * form is shorter (13 characters instead of up to 19) and of fixed width,
 * so its text order (COLLATE "C") is the IDs' numeric order, which id::text
 * has only for IDs of the same number of digits.  Upper case on output,
 * either case on input; the first character is at most '7' (13 characters
 * hold 65 bits, an ID 63).  Pure encodings, independent of the layout.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include "text/base32.h"

PG_FUNCTION_INFO_V1(snowflake_to_text);
PG_FUNCTION_INFO_V1(text_to_snowflake);

/* snowflake_to_text(bigint) → text; a negative ID is 22023. */
Datum
snowflake_to_text(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	char		out[BASE32_INT64_CHARS + 1];

	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowflake ID must not be negative"),
				 errdetail("The value given was " INT64_FORMAT ".", id)));
	base32_encode_int64(id, true, out);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(out, BASE32_INT64_CHARS));
}

/* text_to_snowflake(text) → bigint: the inverse, in either case; 22P02. */
Datum
text_to_snowflake(PG_FUNCTION_ARGS)
{
	char	   *s = text_to_cstring(PG_GETARG_TEXT_PP(0));

	PG_RETURN_INT64(base32_decode_int64("snowflake text form", s, s, strlen(s),
										BASE32_ANY_CASE));
}
