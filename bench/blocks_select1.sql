-- The ceiling: a statement that does nothing, through the same protocol.
SELECT 1;
