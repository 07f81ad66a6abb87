//! sysbench's OLTP scenarios (`oltp_common.lua` and the `oltp_*.lua` scripts of sysbench 1.0.20):
//! which statements one transaction runs, with which arguments, and the random ids and strings.
//!
//! Each group of statements picks its own table uniformly (as sysbench's `execute_*` functions
//! do); ids are drawn from 1..=table_size; a range starts at such an id and spans `range_size`
//! ids; a delete and its insert use the same id.

use super::backend::Stmt;

/// The scenarios, by sysbench's script names without `oltp_`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    PointSelect,
    ReadOnly,
    ReadWrite,
    WriteOnly,
    UpdateIndex,
    UpdateNonIndex,
    Insert,
    Delete,
}

impl Scenario {
    pub const ALL: [Scenario; 8] = [
        Scenario::PointSelect,
        Scenario::ReadOnly,
        Scenario::ReadWrite,
        Scenario::WriteOnly,
        Scenario::UpdateIndex,
        Scenario::UpdateNonIndex,
        Scenario::Insert,
        Scenario::Delete,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scenario::PointSelect => "point_select",
            Scenario::ReadOnly => "read_only",
            Scenario::ReadWrite => "read_write",
            Scenario::WriteOnly => "write_only",
            Scenario::UpdateIndex => "update_index",
            Scenario::UpdateNonIndex => "update_non_index",
            Scenario::Insert => "insert",
            Scenario::Delete => "delete",
        }
    }

    pub fn parse(s: &str) -> Option<Scenario> {
        Scenario::ALL.into_iter().find(|x| x.name() == s)
    }

    /// `"point_select", "read_only", ... or "delete"` for messages.
    pub fn choices() -> String {
        let names: Vec<String> = Scenario::ALL.iter().map(|s| format!("\"{}\"", s.name())).collect();
        let (last, rest) = names.split_last().expect("scenarios");
        format!("{} or {last}", rest.join(", "))
    }

    /// sysbench wraps these in BEGIN/COMMIT (unless `skip_trx`); the single-statement scripts
    /// (point_select, update_*, insert, delete) run in autocommit.
    pub fn transactional(self) -> bool {
        matches!(self, Scenario::ReadOnly | Scenario::ReadWrite | Scenario::WriteOnly)
    }
}

/// The statement counts of one transaction (sysbench's options of the same names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mix {
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
}

impl Default for Mix {
    /// sysbench's defaults.
    fn default() -> Mix {
        Mix {
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
        }
    }
}

/// One group of statements, on one table chosen for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// `n` times the statement on a random id (or a range from it).
    Each(Stmt, u32),
    /// `n` times a delete and an insert of the same id.
    DeleteInsert(u32),
    /// One insert of a new id (oltp_insert).
    NewRow,
}

/// The groups of one transaction of `scenario`, in sysbench's order.
pub fn groups(scenario: Scenario, m: &Mix) -> Vec<Group> {
    let reads = [
        Group::Each(Stmt::PointSelect, m.point_selects),
        Group::Each(Stmt::SimpleRange, m.simple_ranges),
        Group::Each(Stmt::SumRange, m.sum_ranges),
        Group::Each(Stmt::OrderRange, m.order_ranges),
        Group::Each(Stmt::DistinctRange, m.distinct_ranges),
    ];
    let writes = [
        Group::Each(Stmt::IndexUpdate, m.index_updates),
        Group::Each(Stmt::NonIndexUpdate, m.non_index_updates),
        Group::DeleteInsert(m.delete_inserts),
    ];
    let all: Vec<Group> = match scenario {
        // oltp_point_select.lua runs one point select per event, whatever point_selects says.
        Scenario::PointSelect => vec![Group::Each(Stmt::PointSelect, 1)],
        Scenario::ReadOnly => reads.to_vec(),
        Scenario::ReadWrite => reads.iter().chain(writes.iter()).copied().collect(),
        Scenario::WriteOnly => writes.to_vec(),
        Scenario::UpdateIndex => vec![Group::Each(Stmt::IndexUpdate, m.index_updates)],
        Scenario::UpdateNonIndex => vec![Group::Each(Stmt::NonIndexUpdate, m.non_index_updates)],
        Scenario::Insert => vec![Group::NewRow],
        Scenario::Delete => vec![Group::Each(Stmt::Delete, 1)],
    };
    all.into_iter()
        .filter(|g| !matches!(g, Group::Each(_, 0) | Group::DeleteInsert(0)))
        .collect()
}

/// Queries of one transaction as sysbench counts them: (read, write, other); BEGIN and COMMIT are
/// "other".
pub fn query_counts(scenario: Scenario, m: &Mix, skip_trx: bool) -> (u64, u64, u64) {
    let (mut r, mut w) = (0u64, 0u64);
    for g in groups(scenario, m) {
        match g {
            Group::Each(s, n) if s.is_read() => r += u64::from(n),
            Group::Each(_, n) => w += u64::from(n),
            Group::DeleteInsert(n) => w += 2 * u64::from(n),
            Group::NewRow => w += 1,
        }
    }
    let other = if scenario.transactional() && !skip_trx { 2 } else { 0 };
    (r, w, other)
}

/// How ids are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandType {
    /// Every id equally likely.
    Uniform,
    /// sysbench's `special` with its defaults: 75 % of the draws fall in 1 % of the ids.
    Special,
}

impl RandType {
    pub fn parse(s: &str) -> Option<RandType> {
        match s {
            "uniform" => Some(RandType::Uniform),
            "special" => Some(RandType::Special),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            RandType::Uniform => "uniform",
            RandType::Special => "special",
        }
    }
}

/// The ids and strings of one worker (or one table's load), drawn from the project's seeded
/// generator (`util::rng`).
#[derive(Clone, Debug)]
pub struct Rng(crate::util::rng::Rng);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(crate::util::rng::Rng::seeded(seed ^ 0x5DEE_CE66_D1CE_4E5B))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `1..=n` (n ≥ 1).
    pub fn uniform(&mut self, n: u64) -> i64 {
        1 + self.0.below(n) as i64
    }

    /// An id in `1..=n` drawn as `rand` says.
    pub fn id(&mut self, rand: RandType, n: u64) -> i64 {
        match rand {
            RandType::Uniform => self.uniform(n),
            RandType::Special => {
                if self.next_u64() % 100 < 75 {
                    self.uniform((n / 100).max(1))
                } else {
                    self.uniform(n)
                }
            }
        }
    }

    /// sysbench's random strings: `groups` groups of 11 random digits joined by dashes (`c`: 10
    /// groups, 119 characters; `pad`: 5 groups, 59 characters).
    pub fn digits(&mut self, groups: usize) -> String {
        let mut s = String::with_capacity(groups * 12);
        for g in 0..groups {
            if g > 0 {
                s.push('-');
            }
            let mut v = self.next_u64();
            for _ in 0..11 {
                s.push(char::from(b'0' + (v % 10) as u8));
                v /= 10;
            }
        }
        s
    }

    pub fn c_value(&mut self) -> String {
        self.digits(10)
    }

    pub fn pad_value(&mut self) -> String {
        self.digits(5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statement_mix_of_each_scenario_is_sysbench_s() {
        let m = Mix::default();
        // oltp_read_only: 10 point selects + 4 ranges, BEGIN/COMMIT: 16 queries (14 / 0 / 2).
        assert_eq!(query_counts(Scenario::ReadOnly, &m, false), (14, 0, 2));
        // oltp_read_write: + index update, non-index update, delete + insert: 20 (14 / 4 / 2).
        assert_eq!(query_counts(Scenario::ReadWrite, &m, false), (14, 4, 2));
        assert_eq!(query_counts(Scenario::ReadWrite, &m, true), (14, 4, 0));
        assert_eq!(query_counts(Scenario::WriteOnly, &m, false), (0, 4, 2));
        assert_eq!(query_counts(Scenario::PointSelect, &m, false), (1, 0, 0));
        assert_eq!(query_counts(Scenario::UpdateIndex, &m, false), (0, 1, 0));
        assert_eq!(query_counts(Scenario::UpdateNonIndex, &m, false), (0, 1, 0));
        assert_eq!(query_counts(Scenario::Insert, &m, false), (0, 1, 0));
        assert_eq!(query_counts(Scenario::Delete, &m, false), (0, 1, 0));
        let none = Mix {
            simple_ranges: 0,
            sum_ranges: 0,
            order_ranges: 0,
            distinct_ranges: 0,
            point_selects: 3,
            delete_inserts: 2,
            ..m
        };
        assert_eq!(query_counts(Scenario::ReadWrite, &none, false), (3, 6, 2));
        assert_eq!(
            groups(Scenario::ReadWrite, &m).last(),
            Some(&Group::DeleteInsert(1)),
            "delete + insert come last, as in sysbench"
        );
        for s in Scenario::ALL {
            assert_eq!(Scenario::parse(s.name()), Some(s));
        }
    }

    #[test]
    fn ids_and_strings_follow_sysbench_s_formats() {
        let mut r = Rng::new(7);
        for _ in 0..10_000 {
            let id = r.id(RandType::Uniform, 1000);
            assert!((1..=1000).contains(&id));
        }
        let hot = (0..10_000).filter(|_| r.id(RandType::Special, 10_000) <= 100).count();
        assert!((7_000..=8_000).contains(&hot), "75 % + a little of 1 % of the ids: {hot}");
        let c = r.c_value();
        assert_eq!(c.len(), 119);
        assert_eq!(c.split('-').count(), 10);
        assert!(c.split('-').all(|g| g.len() == 11 && g.chars().all(|ch| ch.is_ascii_digit())));
        assert_eq!(r.pad_value().len(), 59);
    }
}
