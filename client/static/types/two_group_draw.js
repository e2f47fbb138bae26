// A two-group design's draws (server/survey/questions/two_group.py; the Python twin: client/two_group.py), shared
// by the survey page's card (types/two_group.js) and the embed's (embed/types/two_group.js): the group, 1 iff
// one uint32 from crypto.getRandomValues is below the group threshold; the instruction, the first whose
// cumulative integer weight exceeds a second uint32; and the answer of a respondent who follows it.

import { cryptoUint32 } from "../rr.js";

const TWO_32 = 4294967296;

function checkUint32(u) {
  if (!Number.isInteger(u) || u < 0 || u >= TWO_32) throw new RangeError("a draw must be a uint32");
  return u;
}

// The group, 1 or 2: 1 iff one uint32 draw is below the group threshold.
export function drawGroup(groupThreshold, nextUint32 = cryptoUint32) {
  if (!Number.isInteger(groupThreshold) || groupThreshold < 1 || groupThreshold >= TWO_32) {
    throw new RangeError("the group threshold must be an integer from 1 to 2^32 - 1");
  }
  return checkUint32(nextUint32()) < groupThreshold ? 1 : 2;
}

// The instruction's index in the group's cumulative weights (ending at 2^32): the first that exceeds one draw.
export function drawInstruction(cumulative, nextUint32 = cryptoUint32) {
  if (!Array.isArray(cumulative) || cumulative.length < 2 || cumulative[cumulative.length - 1] !== TWO_32) {
    throw new RangeError("a group's cumulative weights must end at 2^32");
  }
  const u = checkUint32(nextUint32());
  let r = 0;
  while (u >= cumulative[r]) r += 1;
  return r;
}

// The answer (0 Yes, 1 No) of a respondent who follows `instruction`: `truth` and `unrelated` are 1 for yes.
export function comply(instruction, truth, unrelated) {
  if (instruction === "yes") return 0;
  if (instruction === "no") return 1;
  if (instruction === "unrelated") return unrelated ? 0 : 1;
  return truth ? 0 : 1; // "truthful", "sensitive"
}
