// The database core's types (Caller, AccessPolicy, RulesAccessPolicy, ReadCache, Database,
// DatabaseError) are part of HearthServer's API: whoever builds a server names them.
@_exported import HearthDatabase
