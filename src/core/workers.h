/*-------------------------------------------------------------------------
 *
 * workers.h
 *	  uidgen's background workers that run for the server's whole life.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_WORKERS_H
#define UIDGEN_WORKERS_H

extern void workers_register(const char *name, const char *function);

#endif							/* UIDGEN_WORKERS_H */
