/*-------------------------------------------------------------------------
 *
 * registry.h
 *	  The worker id registry: a table in a PostgreSQL database reached with
 *	  libpq, used by the lease worker alone.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_REGISTRY_H
#define UIDGEN_REGISTRY_H

/* What a statement on the registry found. */
typedef enum RegistryOutcome
{
	REGISTRY_OK,				/* done */
	REGISTRY_NONE,				/* no row: nothing free, or not ours */
	REGISTRY_FAILED				/* not reached, or an error: see the message */
} RegistryOutcome;

extern RegistryOutcome registry_claim(const char *holder, int lease_ms,
									  int32 max_worker, int timeout_ms,
									  int32 *worker, uint64 *floor);
extern RegistryOutcome registry_renew(int32 worker, const char *holder,
									  int lease_ms, uint64 bound, int timeout_ms,
									  uint64 *confirmed, char *current_holder,
									  size_t holder_len);
extern RegistryOutcome registry_release(int32 worker, const char *holder,
										uint64 bound, int timeout_ms);
extern const char *registry_last_error(void);

#endif							/* UIDGEN_REGISTRY_H */
