/* test_findings_repeat.c - the table that folds repeated launch findings (src/core/findings.c):
 * a finding's id is its slot + 1, the slot found by linear probing from the home slot
 * key % 1024 over at most 32 slots, wrapping at the end; the 33rd finding with one home slot
 * gets none (written whole). Issue 52: probing from one slot late went unnoticed. */
#include "vt_test.h"
#include "findings.h"

int main(void)
{
    VT_CHECK_EQ_INT(vt_findings_repeat_id(5), 6, "key 5: home slot 5, id 6");
    VT_CHECK_EQ_INT(vt_findings_repeat_id(5), 6, "the same key again: the same id");
    VT_CHECK_EQ_INT(vt_findings_repeat_id(5 + 1024), 7, "another key with home slot 5: the next slot, id 7");
    VT_CHECK_EQ_INT(vt_findings_repeat_id(6), 8, "key 6: its home slot taken, the one after, id 8");
    VT_CHECK_EQ_INT(vt_findings_repeat_id(1023), 1024, "key 1023: the last slot, id 1024");
    VT_CHECK_EQ_INT(vt_findings_repeat_id(1023 + 1024), 1, "home 1023 taken: wraps to slot 0, id 1");
    /* home slot 100: 32 keys take slots 100..131, the 33rd finds no room */
    int seq = 1;
    for (long i = 0; i < 32; i++)
        if (vt_findings_repeat_id(100 + 1024 * (uint64_t)(i + 1)) != 101 + i) seq = 0;
    VT_CHECK(seq, "32 keys with home slot 100: ids 101..132 in order");
    VT_CHECK_EQ_INT(vt_findings_repeat_id(100 + 1024 * 40), 0, "the 33rd: no slot within 32 probes");
    VT_CHECK_EQ_INT(vt_findings_repeat_id(100 + 1024 * 3), 103, "a key already in the run is still found (its id, 103)");
    vt_findings_reset_after_fork();
    VT_CHECK_EQ_INT(vt_findings_repeat_id(100 + 1024 * 40), 101, "after the reset (a fork child): the home slot again");
    return vt_test_finish();
}
