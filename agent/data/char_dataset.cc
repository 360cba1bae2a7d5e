// LoadTextCorpus: corpus bytes to token windows and next-token targets.
#include "agent/data/char_dataset.h"

#include <torch/torch.h>

#include "agent/common/errors.h"
#include "agent/data/text_corpus.h"

namespace elastic::agent {

Dataset TextCorpusDataset(const std::string& corpus) {
  const std::int64_t windows = TextWindowCount(static_cast<std::int64_t>(corpus.size()));
  if (windows == 0) {
    throw DataError("text corpus: " + std::to_string(corpus.size()) + " bytes: expected at least " +
                    std::to_string(kTextWindow + 1) + " (one window and its target)");
  }
  torch::Tensor bytes =
      torch::from_blob(const_cast<char*>(corpus.data()),
                       {static_cast<std::int64_t>(corpus.size())}, torch::kUInt8)
          .to(torch::kInt64);
  // unfold: row i = bytes[i * stride, i * stride + kTextWindow + 1), then split into the window
  // and its one-byte-later target; contiguous copies, so the rows own their memory.
  torch::Tensor rows = bytes.unfold(0, kTextWindow + 1, kTextWindowStride).narrow(0, 0, windows);
  return Dataset{rows.narrow(1, 0, kTextWindow).contiguous(),
                 rows.narrow(1, 1, kTextWindow).contiguous(), nullptr};
}

Dataset LoadTextCorpus(const std::string& dir) { return TextCorpusDataset(ReadTextCorpus(dir)); }

}  // namespace elastic::agent
