/* uidgen--0.2.0--0.3.0.sql: update script (hand-edited) */

\echo Use "ALTER EXTENSION uidgen UPDATE TO '0.3.0'" to load this file. \quit

-- 0.3.0 changes no SQL object of 0.2.0 yet.  Its install script differs
-- only in what CREATE EXTENSION says without the preload (a NOTICE), which
-- an update does not repeat.
