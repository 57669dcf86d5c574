// Appended to tests/adversarial_salt.rs once `Db` is in main.

/// The same attack on whole databases: the attacker, holding the salt and
/// a copy of the victim's table file, searches offline for colliding keys,
/// then sends them to the victim and to a database with the same data and
/// another salt; the databases' own false-positive counters tell the result.
#[test]
fn db_salt_defeats_replayed_collisions() {
    use siftdb::{Db, Options};
    let open = |dir: &std::path::Path, salt: u64| {
        let opts = Options { hash_salt: Some(salt), auto_compaction: false, ..Options::default() };
        let db = Db::open(dir, opts).unwrap();
        assert_eq!(db.hash_salt(), salt);
        for i in 0..KEYS {
            db.put(&stored_key(i), b"v").unwrap();
        }
        db.flush().unwrap();
        db
    };
    let fp = |db: &Db| db.stats().filter_totals().2;
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let victim = open(dir_a.path(), 0xA11CE);
    let other = open(dir_b.path(), 0xB0B);

    let tables = victim.tables();
    assert_eq!(tables.len(), 1, "one flushed table");
    let (keys, tried) = find_colliding_keys(&Table::open(&StdFs, &tables[0].path).unwrap());
    let replay = |db: &Db| {
        let before = fp(db);
        for k in &keys {
            assert_eq!(db.get(k).unwrap(), None);
        }
        fp(db) - before
    };
    let on_victim = replay(&victim);
    let on_other = replay(&other);
    eprintln!(
        "db: {tried} candidates for {ADVERSARIAL} collisions; replayed: {on_victim} false positives under the \
         salt they were found for, {on_other} under another"
    );
    assert_eq!(on_victim, ADVERSARIAL as u64);
    assert!(on_other <= 8, "{on_other} of {ADVERSARIAL} collisions survive a change of salt");
}
