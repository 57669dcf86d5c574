use super::*;

#[test]
fn default_policies_parse_in_order() {
    let p = parse_policies(DEFAULT_POLICIES).unwrap().0;
    let names: Vec<&str> = p.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, DEFAULT_POLICIES.split(',').collect::<Vec<_>>());
}

#[test]
fn per_level_specs_keep_their_commas() {
    let p = parse_policies("none,per-level:blocked-bloom:10,fuse8").unwrap().0;
    assert_eq!(p.len(), 2);
    assert_eq!(p[1].1.to_string(), "per-level:blocked-bloom:10,fuse8");
    let p = parse_policies("per-level:xor8,fuse8;none").unwrap().0;
    assert_eq!(p.len(), 2);
}

#[test]
fn non_empty_policy_dirs_are_refused_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    // Absent and empty directories are fine.
    std::fs::create_dir(root.join("none")).unwrap();
    let dirs = prepare_dirs(root, &["none", "bloom:10"], false).unwrap();
    assert_eq!(dirs, vec![root.join("none"), root.join("bloom_10")]);
    // A file inside one policy's directory: refused, nothing deleted.
    std::fs::create_dir(root.join("bloom_10")).unwrap();
    std::fs::write(root.join("bloom_10/keep"), b"x").unwrap();
    let err = prepare_dirs(root, &["none", "bloom:10"], false).unwrap_err();
    assert!(err.contains("bloom_10") && err.contains("not empty") && err.contains("--force"), "{err}");
    assert!(root.join("bloom_10/keep").exists());
    // Forced: deleted.
    prepare_dirs(root, &["none", "bloom:10"], true).unwrap();
    assert!(!root.join("bloom_10").exists());
}

#[test]
fn bad_lists_are_rejected() {
    assert!(parse_policies("").is_err());
    assert!(parse_policies("none,none").is_err());
    assert!(parse_policies("bloomy").is_err());
    assert!(parse_workloads("absent,sideways").is_err());
    assert_eq!(parse_workloads("absent,absent").unwrap().0, vec![Workload::Absent]);
    assert_eq!(parse_workloads("scan,absent").unwrap().0, vec![Workload::Scan, Workload::Absent]);
    let (point, prefix, range) = parse_workloads(
        "prefix-present,absent,range-near,prefix-absent,prefix-present,range-empty,range-near",
    )
    .unwrap();
    assert_eq!(point, vec![Workload::Absent]);
    assert_eq!(prefix, vec![PrefixWorkload::Present, PrefixWorkload::Absent]);
    assert_eq!(range, vec![RangeWorkload::Near, RangeWorkload::Empty]);
    assert!(parse_range_kind("none").is_err() && parse_range_kind("ribbon:10").is_ok());
    assert!(parse_extractor("fixed:0").is_err() && parse_extractor("up-to:0x3a").is_ok());
    assert!(!Workload::Scan.is_lookup());
}
