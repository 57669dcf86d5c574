//! The report as an SVG chart.

use super::*;

impl Report {
    /// A chart: for each workload, data blocks read per lookup (log axis)
    /// and lookups per second, a labelled bar per policy.
    pub fn to_svg(&self) -> String {
        let policies: Vec<String> = self.results.iter().map(|r| r.name.clone()).collect();
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
        let blocks = workloads.iter().map(|&w| svg::Panel {
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
        let panels: Vec<svg::Panel> = blocks.chain(speed).collect();
        let c = &self.config;
        svg::render(
            &format!("siftdb read amplification: {} keys, {} lookups per workload", c.keys, c.lookups),
            &policies,
            &panels,
            workloads.len(),
        )
    }
}
