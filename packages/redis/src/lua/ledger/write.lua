-- Writes a ledger entry (after entry-write.lua: its KEYS[1-5] and ARGV[1-10]).
-- Returns  the new version, 0 refused
return write_entry()
