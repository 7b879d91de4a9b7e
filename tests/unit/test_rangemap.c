/* test_rangemap.c - src/rangemap.c against a plain reference array: random inserts and removals
 * across block splits and emptied blocks, floor/next/prev, lookups of every kind of address. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rangemap.h"
#include "vt_test.h"

#define SLOTS 20000
static struct vt_rm m; /* zero: an empty map */
static int live[SLOTS]; /* slot i is the range [base(i), base(i) + 0x100) */
static uint64_t base_of(int i) { return 0x100000000ull + (uint64_t)i * 0x1000; }

int main(void)
{
    srand(11);
    int ok = 1, nlive = 0, hinted_ok = 1;
    /* Inserts are offered the last removal's hint (where the next insert often fits, and often
     * not), a random word, or none; removals the hint of an earlier insert of any slot. A wrong
     * hint must cost only the search: the lookups below check the map against the reference. */
    uint32_t last_removal = 0, ins_at[SLOTS] = { 0 };
    for (int step = 0; step < 200000 && ok; step++) {
        int i = rand() % SLOTS;
        if (!live[i]) {
            int pick = rand() % 3;
            uint32_t hint = pick == 0 ? last_removal : pick == 1 ? (uint32_t)rand() : 0;
            ok = vt_rm_insert(&m, base_of(i), base_of(i) + 0x100, (uint32_t)i, hint, &ins_at[i]) == 0;
            live[i] = 1; nlive++;
            struct vt_rm_ent e;
            hinted_ok &= ins_at[i] != 0 && vt_rm_update_meta(&m, base_of(i), ins_at[i], 0, 0, &e) == 0 && e.at == ins_at[i];
        } else if (rand() % 3 == 0) {
            struct vt_rm_ent e;
            uint32_t hint = ins_at[rand() % 2 ? i : rand() % SLOTS];
            ok = vt_rm_remove(&m, base_of(i), hint, &e) == 0 && e.meta == (uint32_t)i;
            last_removal = e.at;
            live[i] = 0; nlive--;
        }
    }
    VT_CHECK(ok, "200000 random inserts/removals with right, stale and bogus hints succeed (%d live)", nlive);
    VT_CHECK(hinted_ok, "an insert's *at_out names where the entry sits");
    ok = 1;
    for (int i = 0; i < SLOTS && ok; i++) {
        struct vt_rm_ent e;
        int in = vt_rm_lookup(&m, base_of(i) + 0x80, &e) == 0;
        int gap = vt_rm_lookup(&m, base_of(i) + 0x800, &e) == 0;
        ok = in == live[i] && !gap && (!in || (e.base == base_of(i) && e.meta == (uint32_t)i));
    }
    VT_CHECK(ok, "every lookup (inside a live range, inside a removed one, in a gap) matches the reference");
    ok = 1;
    for (int i = 0; i + 1 < SLOTS && ok; i++) {
        struct vt_rm_ent e;
        int j = i + 1;
        while (j < SLOTS && !live[j]) j++;
        int has = vt_rm_next(&m, base_of(i), &e) == 0;
        ok = has == (j < SLOTS) && (!has || e.base == base_of(j));
    }
    VT_CHECK(ok, "next() walks the ranges in address order");
    ok = 1;
    for (int i = 1; i < SLOTS && ok; i++) {
        struct vt_rm_ent e;
        int j = i - 1;
        while (j >= 0 && !live[j]) j--;
        int has = vt_rm_prev(&m, base_of(i), &e) == 0;
        ok = has == (j >= 0) && (!has || e.base == base_of(j));
    }
    VT_CHECK(ok, "prev() walks them backwards");
    int count = 0;
    for (int i = 0; i < SLOTS; i++)
        if (live[i]) { struct vt_rm_ent e; if (vt_rm_remove(&m, base_of(i), 0, &e) == 0) count++; }
    VT_CHECK_EQ_INT(count, nlive, "removing everything removes each live range once");
    struct vt_rm_ent e;
    VT_CHECK(vt_rm_lookup(&m, base_of(5) + 1, &e) != 0 && vt_rm_floor(&m, ~0ull, &e) != 0, "the map is empty again");
    VT_CHECK_EQ_INT(vt_rm_insert(&m, 0x1000, 0x2000, 7, 0, NULL), 0, "insert into an emptied map (blocks reused)");
    VT_CHECK(vt_rm_lookup(&m, 0x1fff, &e) == 0 && e.meta == 7, "and find it");
    VT_CHECK_EQ_INT(vt_rm_insert(&m, 0x1800, 0x1900, 8, 0, NULL), -2, "an insert inside an entry is refused (-2)");
    VT_CHECK_EQ_INT(vt_rm_insert(&m, 0x0800, 0x1001, 8, 0, NULL), -2, "so is one overlapping its start");
    VT_CHECK_EQ_INT(vt_rm_insert(&m, 0x0800, 0x1000, 8, 0, NULL), 0, "one ending exactly at its start is not");
    VT_CHECK_EQ_INT(vt_rm_insert(&m, 0x2000, 0x3000, 9, 0, NULL), 0, "nor one starting exactly at its end");
    VT_CHECK(vt_rm_update_meta(&m, 0x2000, 0, 0x100, 0x1, &e) == 0 && e.meta == 0x108, "update_meta sets and clears bits");
    VT_CHECK(vt_rm_update_meta(&m, 0x2001, 0, 0x100, 0, &e) == -1, "only for an entry starting exactly there");

    /* removal hints: a fresh one, one made stale by an insert before the entry, a bogus one */
    struct vt_rm h;
    memset(&h, 0, sizeof h);
    for (uint64_t i = 0; i < 100; i++) vt_rm_insert(&h, 0x100000 + i * 0x1000, 0x100000 + i * 0x1000 + 0x800, (uint32_t)i, 0, NULL);
    struct vt_rm_ent a, b;
    VT_CHECK(vt_rm_update_meta(&h, 0x100000 + 50 * 0x1000, 0, 0, 0, &a) == 0 && a.at != 0, "update_meta gives a hint");
    VT_CHECK(vt_rm_remove(&h, 0x100000 + 50 * 0x1000, a.at, &b) == 0 && b.meta == 50, "remove with its hint");
    VT_CHECK(vt_rm_lookup(&h, 0x100000 + 50 * 0x1000, &b) != 0, "and it is gone");
    VT_CHECK(vt_rm_update_meta(&h, 0x100000 + 70 * 0x1000, 0, 0, 0, &a) == 0, "hint for another entry");
    VT_CHECK_EQ_INT(vt_rm_insert(&h, 0x10, 0x20, 999, 0, NULL), 0, "an insert before it moves it");
    VT_CHECK(vt_rm_remove(&h, 0x100000 + 70 * 0x1000, a.at, &b) == 0 && b.meta == 70, "a stale hint still removes the right entry");
    VT_CHECK(vt_rm_lookup(&h, 0x100000 + 69 * 0x1000, &b) == 0 && b.meta == 69 && vt_rm_lookup(&h, 0x10, &b) == 0 && b.meta == 999,
             "and only it");
    VT_CHECK(vt_rm_remove(&h, 0x100000 + 71 * 0x1000, 0xffffffffu, &b) == 0 && b.meta == 71, "a bogus hint is ignored");
    VT_CHECK(vt_rm_remove(&h, 0x100000 + 71 * 0x1000, 0, &b) == -1, "removing twice fails");

    /* the lock-free exact get: right, stale, bogus and no hint; never an interior or missing base */
    VT_CHECK(vt_rm_update_meta(&h, 0x100000 + 80 * 0x1000, 0, 0, 0, &a) == 0, "hint for entry 80");
    VT_CHECK(vt_rm_get_lockfree(&h, 0x100000 + 80 * 0x1000, a.at, &b) == 0 && b.meta == 80 && b.at == a.at &&
             b.end == 0x100000 + 80 * 0x1000 + 0x800, "get with its hint");
    VT_CHECK(vt_rm_get_lockfree(&h, 0x100000 + 81 * 0x1000, a.at, &b) == 0 && b.meta == 81, "get with another entry's hint");
    VT_CHECK(vt_rm_get_lockfree(&h, 0x100000 + 82 * 0x1000, 0xffffffffu, &b) == 0 && b.meta == 82, "get with a bogus hint");
    VT_CHECK(vt_rm_get_lockfree(&h, 0x100000 + 83 * 0x1000, 0, &b) == 0 && b.meta == 83, "get without a hint");
    VT_CHECK(vt_rm_get_lockfree(&h, 0x100000 + 83 * 0x1000 + 8, 0, &b) == -1, "no entry starts at an interior address");
    VT_CHECK(vt_rm_get_lockfree(&h, 0x100000 + 80 * 0x1000 + 8, a.at, &b) == -1, "not even with the hint of its entry");
    VT_CHECK(vt_rm_get_lockfree(&h, 0x100000 + 71 * 0x1000, 0, &b) == -1, "nor at a removed one");
    VT_CHECK(vt_rm_get_lockfree(&h, 0x1, 0, &b) == -1, "nor before the first entry");

    /* insert hints: the removal's hint puts the same range back without a search, and a hint
     * whose neighbours do not bracket the range is not followed */
    uint32_t at = 0;
    VT_CHECK(vt_rm_remove(&h, 0x100000 + 30 * 0x1000, 0, &b) == 0 && b.at != 0, "a removal says where the entry sat");
    VT_CHECK(vt_rm_insert(&h, 0x100000 + 30 * 0x1000, 0x100000 + 30 * 0x1000 + 0x800, 30, b.at, &at) == 0 && at == b.at,
             "the same range goes back where it sat");
    VT_CHECK(vt_rm_insert(&h, 0x100000 + 30 * 0x1000 + 0x800, 0x100000 + 30 * 0x1000 + 0x900, 31, b.at, &at) == 0 && at != b.at,
             "a range that sorts after the hinted slot goes after it");
    VT_CHECK(vt_rm_insert(&h, 0x100000 + 30 * 0x1000 + 0x7ff, 0x100000 + 30 * 0x1000 + 0x801, 32, b.at, NULL) == -2,
             "an overlap is refused whatever the hint");
    int sorted = 1;
    uint64_t prev_end = 0;
    for (uint64_t a0 = 0; sorted && vt_rm_next(&h, a0, &b) == 0; a0 = b.base) { sorted = b.base >= prev_end; prev_end = b.end; }
    VT_CHECK(sorted, "the map stays sorted and disjoint");
    return vt_test_finish();
}
