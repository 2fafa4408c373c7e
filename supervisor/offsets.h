// The supervisor's names for common/offsets.h (the one offsets vocabulary).
#ifndef SLUICE_SUPERVISOR_OFFSETS_H_
#define SLUICE_SUPERVISOR_OFFSETS_H_

#include "common/offsets.h"

namespace sluice::supervisor {

using ::sluice::ContainsEndOfPartition;
using ::sluice::DecodeOffsets;
using ::sluice::EncodeOffsets;
using ::sluice::FormatOffsets;
using ::sluice::FromProto;
using ::sluice::MaxOffsets;
using ::sluice::OffsetMap;
using ::sluice::Restrict;
using ::sluice::ToProto;

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_OFFSETS_H_
