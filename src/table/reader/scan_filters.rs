//! What a table's filters say about a scan: a prefix (the point filter's
//! prefix entries) and a range (the range filter). Neither reads data or
//! counts a probe; the scan that asks counts.

use super::{Table, answer};
use crate::key_image::KeyImage;
use crate::prefix::PrefixExtractor;
use crate::table::range_filter_block::TableRangeFilter;
use crate::table::stats::FilterAnswer;

impl Table {
    /// The prefix extractor whose prefixes the filter holds, if any (and if
    /// this build knows its name).
    #[must_use]
    pub fn prefix_extractor(&self) -> Option<PrefixExtractor> {
        self.inner.prefix_extractor
    }

    /// What the filter says about prefix `q` (extracted by `extractor`),
    /// without reading data or counting a probe. `NoFilter` unless the table
    /// was written with that same extractor and has a usable filter: a table
    /// written with another extractor, or none, is never skipped by prefix.
    #[must_use]
    pub fn prefix_answer(&self, extractor: &PrefixExtractor, q: &[u8]) -> FilterAnswer {
        match &self.inner.filter {
            Some(f) if self.inner.prefix_extractor.as_ref() == Some(extractor) => {
                answer(f.may_contain(PrefixExtractor::hash(f.seed(), q)))
            }
            _ => FilterAnswer::NoFilter,
        }
    }

    /// The range filter, if the table has a usable one (not dropped).
    #[must_use]
    pub fn range_filter(&self) -> Option<&TableRangeFilter> {
        self.inner.range_filter.as_deref()
    }

    /// Why the range filter was dropped at open, if it was (a crc mismatch
    /// or a block that does not decode).
    #[must_use]
    pub fn range_filter_dropped(&self) -> Option<&str> {
        self.inner.range_filter_dropped.as_deref()
    }

    /// What the range filter says about the keys whose images under
    /// `image` lie in `[lo, hi]`, without reading data or counting a
    /// probe. `NoFilter` unless the table has a usable range filter built
    /// over that same image (by name), of a version and kind this build
    /// reads, and the range touches few enough buckets to probe
    /// ([`TableRangeFilter::answer`]): a table written under another image,
    /// or none, is never skipped by range.
    #[must_use]
    pub fn range_answer(&self, image: &KeyImage, lo: u64, hi: u64) -> FilterAnswer {
        match self.range_filter().filter(|f| f.image() == image.name()).and_then(|f| f.answer(lo, hi)) {
            Some(may) => answer(may),
            None => FilterAnswer::NoFilter,
        }
    }
}
