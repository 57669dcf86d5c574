//! Adversarial keys: why every database hashes keys with its own salt.
//!
//! An attacker who knows a database's hash salt can search offline for keys
//! that its filters answer "maybe" for without holding them, and then send
//! only those: every lookup becomes a false positive and pays a data-block
//! read. The salt is drawn at random per database and stored in its
//! manifest (it is every table's filter seed), so the same keys against a
//! database with another salt are ordinary absent keys and see the nominal
//! false-positive rate.
//!
//! The test plays both sides at the table level, where the salt is
//! `TableOptions::seed`: the filter of a table is exactly what a `Db`
//! consults before touching the table.

use std::sync::Arc;

use siftdb::ValueKind;
use siftdb::filter::FilterKind;
use siftdb::fs::StdFs;
use siftdb::table::{Table, TableBuilder, TableOptions};
use siftdb::{Db, FilterPolicy, Options};

const KEYS: u32 = 2000;
const ADVERSARIAL: usize = 200;

fn stored_key(i: u32) -> Vec<u8> {
    format!("user:{i:08}").into_bytes()
}

fn build(dir: &std::path::Path, name: &str, filter: FilterKind, salt: u64) -> Table {
    let path = dir.join(name);
    let opts = TableOptions { filter, seed: salt, ..TableOptions::default() };
    let mut b = TableBuilder::new(Arc::new(StdFs), &path, opts).unwrap();
    for i in 0..KEYS {
        b.add(&stored_key(i), u64::from(i) + 1, ValueKind::Value, b"v").unwrap();
    }
    b.finish().unwrap();
    Table::open(&StdFs, &path).unwrap()
}

/// The attacker's offline search: absent keys the filter lets through.
fn find_colliding_keys(victim: &Table) -> (Vec<Vec<u8>>, u64) {
    let mut found = Vec::new();
    let mut tried = 0u64;
    while found.len() < ADVERSARIAL {
        // Inside the table's key range, or a range check alone rules it out.
        let key = format!("user:{:08}#{tried}", tried % u64::from(KEYS)).into_bytes();
        tried += 1;
        if victim.get(&key, u64::MAX).unwrap().is_false_positive() {
            found.push(key);
        }
        assert!(tried < 10_000_000, "filter too precise to attack in this test");
    }
    (found, tried)
}

fn false_positives(table: &Table, keys: &[Vec<u8>]) -> usize {
    keys.iter().filter(|k| table.get(k, u64::MAX).unwrap().is_false_positive()).count()
}

fn attack(filter: FilterKind) {
    let dir = tempfile::tempdir().unwrap();
    let salt_a = 0x5A17_A5A1_7A5A_17A5;
    let salt_b = 0x0B0B_1234_5678_9ABC;
    let victim = build(dir.path(), "a.sst", filter, salt_a);
    let other = build(dir.path(), "b.sst", filter, salt_b);
    let fpr = victim.filter_details().theoretical_fpr.unwrap();

    let (keys, tried) = find_colliding_keys(&victim);
    #[expect(clippy::cast_precision_loss, reason = "a rate for display")]
    let search_rate = ADVERSARIAL as f64 / tried as f64;
    // The search itself measures the filter's false-positive rate.
    assert!(
        search_rate < fpr * 3.0 && search_rate > fpr / 3.0,
        "{filter}: search rate {search_rate}, fpr {fpr}"
    );

    // Against the salt they were found for, every adversarial key is a false positive...
    assert_eq!(false_positives(&victim, &keys), ADVERSARIAL);
    // ...against another salt, they are ordinary absent keys. Expected
    // count ADVERSARIAL × fpr (< 2 here); the bound leaves a Poisson tail
    // below 1e-4 for a correct filter, while any salt-independent collision
    // would put it near ADVERSARIAL.
    let hits = false_positives(&other, &keys);
    #[expect(clippy::cast_precision_loss, reason = "an expected count")]
    let expected = ADVERSARIAL as f64 * fpr;
    eprintln!(
        "{filter}: {tried} candidates searched for {ADVERSARIAL} collisions (rate {search_rate:.4}, fpr {fpr:.4}); \
         with salt A {ADVERSARIAL}/{ADVERSARIAL} false positives, with salt B {hits} (expected {expected:.2})"
    );
    assert!(hits <= 8, "{filter}: {hits} of {ADVERSARIAL} adversarial keys still collide under another salt");
}

#[test]
fn binary_fuse_collisions_do_not_transfer_across_salts() {
    attack(FilterKind::BinaryFuse8);
}

#[test]
fn bloom_collisions_do_not_transfer_across_salts() {
    attack(FilterKind::Bloom { bits_per_key: 10.0 });
}

#[test]
fn blocked_bloom_collisions_do_not_transfer_across_salts() {
    attack(FilterKind::BlockedBloom { bits_per_key: 10.0 });
}
/// The same attack on whole databases: the attacker, holding the salt and
/// a copy of the victim's table file, searches offline for colliding keys,
/// then sends them to the victim and to a database with the same data and
/// another salt; the databases' own false-positive counters tell the result.
#[test]
fn db_salt_defeats_replayed_collisions() {
    let open = |dir: &std::path::Path, salt: u64| {
        // Blocked Bloom, the level-0 filter the attack was written against
        // (the default policy's before issue 39).
        let opts = Options {
            hash_salt: Some(salt),
            auto_compaction: false,
            filter_policy: Some(FilterPolicy::uniform(FilterKind::BlockedBloom { bits_per_key: 10.0 })),
            ..Options::default()
        };
        let db = Db::open(dir, opts).unwrap();
        assert_eq!(db.hash_salt(), salt);
        for i in 0..KEYS {
            db.put(stored_key(i), b"v").unwrap();
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
