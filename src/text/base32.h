/*-------------------------------------------------------------------------
 *
 * base32.h
 *	  Crockford's base32 alphabet for fixed-width, order-preserving text
 *	  forms: a 128-bit UUID in 26 characters (ULID, TypeID) and a 63-bit
 *	  snowflake ID in 13 characters.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_BASE32_H
#define UIDGEN_BASE32_H

/* Characters of a 128-bit value: 130 bits, the top two zero. */
#define BASE32_UUID_CHARS 26
/* Characters of a non-negative int64: 65 bits, the top two zero. */
#define BASE32_INT64_CHARS 13

/* Which characters a decoder accepts. */
typedef enum Base32Case
{
	BASE32_ANY_CASE,			/* ULID, snowflake text: case-insensitive */
	BASE32_LOWER_ONLY			/* TypeID: lower case only */
} Base32Case;

extern void base32_encode_uuid(const unsigned char *uuid16, bool upper, char *out);
extern void base32_encode_int64(int64 v, bool upper, char *out);
extern void base32_decode_uuid(const char *what, const char *input,
							   const char *s, int len,
							   Base32Case accept, unsigned char *uuid16);
extern int64 base32_decode_int64(const char *what, const char *input,
								 const char *s, int len,
								 Base32Case accept);

#endif							/* UIDGEN_BASE32_H */
