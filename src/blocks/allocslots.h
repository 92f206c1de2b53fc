/*-------------------------------------------------------------------------
 *
 * allocslots.h
 *	  The block allocator's database slots: which allocator worker serves
 *	  which database, and how backends start and wake it.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_ALLOCSLOTS_H
#define UIDGEN_ALLOCSLOTS_H

extern void allocslots_register(void);
extern bool allocator_wake(Oid dbid, bool raise);
extern bool allocator_token_alive(uint64 token);
extern void allocator_request_exit(Oid dbid);
extern bool allocator_is_this_process(void);

/* For the allocator worker and the request queue */
extern Oid	allocator_attach(int slot, uint32 generation);
extern uint64 allocator_my_token(void);
extern bool allocator_exit_requested(void);
extern bool allocslots_token_alive_locked(uint64 token);
extern Oid	allocslots_my_dbid(void);
extern void allocslots_detach_locked(void);
extern void allocslots_retire_locked(void);

#endif							/* UIDGEN_ALLOCSLOTS_H */
