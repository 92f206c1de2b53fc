-- The privilege model of docs/block-sequences.md ("Privileges"): an
-- application role needs no grant to generate IDs and to reserve from the
-- block sequences that exist; a migrations role granted EXECUTE on the four
-- administration functions manages block sequences without being a
-- superuser; neither writes id_sequences directly.
CREATE ROLE regress_uidgen_app;
CREATE ROLE regress_uidgen_migrator;
GRANT EXECUTE ON FUNCTION seq_create(text, bigint, integer, bigint, text, text, text, bigint, bigint, text),
    seq_alter(text, integer, bigint, text, bigint, bigint), seq_advance(text, bigint), seq_drop(text)
    TO regress_uidgen_migrator;

-- The migrations role creates, alters and advances a sequence
SET ROLE regress_uidgen_migrator;
SELECT seq_create('priv_orders', block_size => 10);
SELECT seq_alter('priv_orders', block_size => 20);
SELECT seq_advance('priv_orders', 100);
SELECT error_of($$UPDATE id_sequences SET next_block_start = 1$$);
RESET ROLE;

-- The application role generates and reserves, and manages nothing
SET ROLE regress_uidgen_app;
SELECT uuid_extract_version(uuidv7_next()) AS uuidv7;
SELECT * FROM seq_reserve_block('priv_orders');
SELECT seq_next('priv_orders');
SELECT name, next_block_start, block_size FROM id_sequences WHERE name = 'priv_orders';
SELECT error_of($$SELECT seq_create('priv_other')$$);
SELECT error_of($$SELECT seq_alter('priv_orders', block_size => 1)$$);
SELECT error_of($$SELECT seq_advance('priv_orders', 1000)$$);
SELECT error_of($$SELECT seq_drop('priv_orders')$$);
SELECT error_of($$DELETE FROM id_sequences$$);
-- A sequence that does not exist: the hint says who may create it
SELECT * FROM seq_reserve_block('priv_missing', 1);
RESET ROLE;

SET ROLE regress_uidgen_migrator;
SELECT seq_drop('priv_orders');
RESET ROLE;
REVOKE EXECUTE ON FUNCTION seq_create(text, bigint, integer, bigint, text, text, text, bigint, bigint, text),
    seq_alter(text, integer, bigint, text, bigint, bigint), seq_advance(text, bigint), seq_drop(text)
    FROM regress_uidgen_migrator;
DROP ROLE regress_uidgen_app;
DROP ROLE regress_uidgen_migrator;
