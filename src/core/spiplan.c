/*-------------------------------------------------------------------------
 *
 * spiplan.c
 *	  A statement prepared once and kept (SPI_keepplan), for the background
 *	  workers that run the same statements round after round.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"

#include "core/spiplan.h"

/* Prepare and keep one statement; errors are elog()s (a bug, not a user's). */
SPIPlanPtr
spiplan_keep(const char *sql, int nargs, Oid *argtypes)
{
	SPIPlanPtr	plan = SPI_prepare(sql, nargs, argtypes);

	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "SPI_keepplan failed");
	return plan;
}
