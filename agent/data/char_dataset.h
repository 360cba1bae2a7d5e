// The text corpus (text_corpus.h) as training tensors for the gpt model. Includes LibTorch.
#pragma once

#include <string>

#include "agent/data/dataset.h"

namespace elastic::agent {

// Dataset rows are the corpus windows: `images` holds the input tokens, int64 [N, kTextWindow],
// `labels` the next-token targets, int64 [N, kTextWindow] (row i of labels is row i of images
// shifted by one byte). The batch queue, the sample order and the checkpoint treat rows alike
// whatever they hold. Throws DataError for a missing corpus or one too short for a window.
Dataset LoadTextCorpus(const std::string& dir);

// The same from corpus bytes already read (tests).
Dataset TextCorpusDataset(const std::string& corpus);

}  // namespace elastic::agent
