// What one input of a model is: its name, shape and dtype, the values it takes, and what they
// mean. A graph declares its inputs with these; a synthetic source draws from them, and a real
// reader checks its batches against them.
#pragma once

#include <string>

#include "engine/core/dtype.h"
#include "engine/core/shape.h"
#include "engine/data/pretraining_batch.h"
#include "engine/data/translation_batch.h"

namespace dlbench::data {

struct Distribution {
  enum class Kind {
    kNormal,
    kUniformInt,
    kZipf,
    kBlobLabels,
    kBlobImages,
    kPretraining,
    kTranslation
  };
  Kind kind = Kind::kNormal;
  // kNormal: mean a, standard deviation b. kUniformInt: integers in [a, b). kZipf: integers in
  // [a, b), a + k drawn with probability proportional to (k + 1)^-exponent (ids of items or
  // words whose popularity falls with their rank, a first: the skew of real data).
  // kBlobLabels: i32 [n, h, w] class maps of b classes, nested ellipses on a background
  // (engine/data/blobs.h); kBlobImages: [n, h, w, channels] images of the same scenes (one source
  // draws both from its seed, so they match). kPretraining: field a (a PretrainingField) of BERT's
  // pretraining batches (engine/data/pretraining_batch.h) over a vocabulary of b ids, sequences
  // of `sequence` positions with at most `predictions` predicted each; one source draws every
  // field from its seed, so they match. kTranslation: field a (a TranslationField) of sentence-pair
  // batches (engine/data/translation_batch.h) over a vocabulary of b ids, both sides padded to
  // `sequence` positions; one source draws every field from its seed.
  double a = 0, b = 1;
  double exponent = 0;
  std::int64_t sequence = 0, predictions = 0;
  // kTranslation: the per-token fields time-major, [sequence * batch] with position t of sentence
  // n at t * batch + n (GNMT's LSTMs read them so), rather than [batch * sequence].
  bool time_major = false;
};

struct InputSpec {
  std::string name;  // "images", "labels", "users"
  Shape shape;
  DType dtype = DType::kF32;
  Distribution values;
  std::string meaning;  // "images (NHWC)", "class labels"
};

inline Distribution normal(double mean, double stddev) {
  return {Distribution::Kind::kNormal, mean, stddev};
}
inline Distribution uniform_int(std::int64_t low, std::int64_t high) {
  return {Distribution::Kind::kUniformInt, static_cast<double>(low), static_cast<double>(high)};
}
inline Distribution scene_labels(std::int64_t classes) {
  return {Distribution::Kind::kBlobLabels, 0.0, static_cast<double>(classes)};
}
inline Distribution scene_images(std::int64_t classes) {
  return {Distribution::Kind::kBlobImages, 0.0, static_cast<double>(classes)};
}
// An i32 field of BERT's pretraining batches: [batch * sequence] for the per-token fields,
// [batch] for the lengths and next-sentence labels.
inline Distribution pretraining(PretrainingField field, std::int64_t vocabulary,
                                std::int64_t sequence, std::int64_t predictions) {
  return {Distribution::Kind::kPretraining,
          static_cast<double>(field),
          static_cast<double>(vocabulary),
          0.0,
          sequence,
          predictions};
}
// An i32 field of a translation batch: [batch * sequence] (time-major: [sequence * batch]) for
// the per-token fields, [batch] for the lengths.
inline Distribution translation(TranslationField field, std::int64_t vocabulary,
                                std::int64_t sequence, bool time_major = false) {
  return {Distribution::Kind::kTranslation,
          static_cast<double>(field),
          static_cast<double>(vocabulary),
          0.0,
          sequence,
          0,
          time_major};
}
inline Distribution zipf(std::int64_t low, std::int64_t high, double exponent) {
  return {Distribution::Kind::kZipf, static_cast<double>(low), static_cast<double>(high), exponent};
}

}  // namespace dlbench::data
