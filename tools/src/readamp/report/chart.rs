//! The report as an SVG chart.

use super::*;

impl Report {
    /// The chart ([`svg::render`]): filter memory against blocks per absent
    /// lookup, then for each workload lookups per second, then the other
    /// workloads' blocks per lookup (log axis).
    ///
    /// # Errors
    /// Only if the chart cannot be laid out.
    pub fn to_svg(&self) -> Result<String, String> {
        let default = siftdb::policy::FilterPolicy::default().to_string();
        let policies = self
            .results
            .iter()
            .map(|r| svg::Policy {
                name: r.name.clone(),
                bits_per_key: bits_per_key(r),
                baseline: r.name == "none",
                default: r.name == default,
            })
            .collect();
        let mut workloads: Vec<Workload> = Vec::new();
        for w in self.results.iter().flat_map(|r| &r.workloads) {
            if !workloads.contains(&w.workload) {
                workloads.push(w.workload);
            }
        }
        let values = |workload: Workload, pick: fn(&Figures) -> f64| -> Vec<Option<f64>> {
            self.results
                .iter()
                .map(|r| r.workloads.iter().find(|w| w.workload == workload).map(|w| pick(&figures(w))))
                .collect()
        };
        // The memory panel shows absent keys' blocks; a bar panel would repeat it.
        let blocks = workloads.iter().filter(|&&w| w != Workload::Absent).map(|&w| svg::Panel {
            title: format!("{} keys: data blocks read per lookup", w.name()),
            better: svg::Better::Lower,
            log: true,
            values: values(w, |f| f.blocks_per_lookup),
        });
        let speed = workloads.iter().map(|&w| svg::Panel {
            title: format!("{} keys: lookups per second", w.name()),
            better: svg::Better::Higher,
            log: false,
            values: values(w, |f| f.lookups_per_second),
        });
        let c = &self.config;
        svg::render(&svg::Chart {
            title: format!("siftdb read amplification: {} keys, {} lookups per workload", c.keys, c.lookups),
            policies,
            absent_blocks: workloads
                .contains(&Workload::Absent)
                .then(|| values(Workload::Absent, |f| f.blocks_per_lookup)),
            panels: speed.chain(blocks).collect(),
        })
    }
}
