/// The SQL that creates `uuid_v7()` in a service's database: a version 7
/// UUID (RFC 9562), 48 bits of Unix time in milliseconds followed by random
/// bits, for primary keys that grow with time. A random (version 4) key
/// puts each insert on a random leaf of its B-tree, which on a large table
/// is rarely one written since the last checkpoint, so nearly every insert
/// also writes a full 8 KB page image to the WAL (docs/PERFORMANCE.md,
/// "Flat as it grows"); time-ordered keys keep inserts on the rightmost
/// leaves. The ids are still UUIDs: callers see no other change.
///
/// `TimeOrderedUUID` makes the same ids in the process.
///
/// Part of an applied migration (PointsSchema 8), whose text is
/// checksummed: never edit it; add a migration instead.
public enum UUIDv7Function {
    public static let createSQL = """
        -- A version 7 UUID: the time in milliseconds over the first 48 bits of a
        -- random (version 4) UUID, whose version bits 0100 become 0111.
        create function uuid_v7() returns uuid language sql volatile parallel safe as $$
            select encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
                placing substring(int8send((extract(epoch from clock_timestamp()) * 1000)::bigint) from 3)
                from 1 for 6), 52, 1), 53, 1), 'hex')::uuid
        $$;
        """
}
