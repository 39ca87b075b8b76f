/* micro_rt: TFLM's TFLite_Detection_PostProcess custom operator (float32): SSD box decoding,
 * then non-max suppression, regular (per class) or fast (per anchor, its top classes), written
 * from the reference kernel's algorithm in our words. Numpy twin: kernels/detection_postprocess.py.
 *
 * The working arrays are TFLM's eleven scratch buffers (the same sizes, planned in the arena as
 * TFLM plans them) and are used as TFLM uses them; the sorts are TFLM's algorithms: a stable
 * descending merge sort (insertion sort below 20 values) of the kept scores, and a heap partial
 * sort ordering by (score descending, index ascending). Both orders are total for scores that are
 * not NaN, so any correct sort gives the twin's indices; the algorithms are TFLM's for the cycles.
 * Decoding computes in double with newlib's exp, as TFLM's std::exp on a device (the host: glibc's).
 * Declared in mrt_nnfunctions.h. */
#include <math.h>
#include "mrt_nnfunctions.h"
#include "mrt_math.h"

#define INSERTION_SORT_BELOW 20

/* ---- sorts ---- */

/* Stable insertion of each index after the last one whose value is not below its own
 * (upper_bound by binary search, then a rotate). */
static void insertion_sort_desc(int32_t *idx, int32_t n, const float *values)
{
    for (int32_t i = 1; i < n; ++i) {
        const int32_t v = idx[i];
        int32_t lo = 0, hi = i;
        while (lo < hi) {
            const int32_t mid = lo + (hi - lo) / 2;
            if (values[v] > values[idx[mid]]) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        __builtin_memmove(idx + lo + 1, idx + lo, (uint32_t)(i - lo) * 4u);
        idx[lo] = v;
    }
}

/* Top-down merge sort of idx by values, descending and stable; scratch holds n indices. */
static void merge_sort_desc(int32_t *idx, int32_t *scratch, int32_t n, const float *values)
{
    if (n < INSERTION_SORT_BELOW) {
        insertion_sort_desc(idx, n, values);
        return;
    }
    const int32_t half = n / 2;
    merge_sort_desc(idx, scratch, half, values);
    merge_sort_desc(idx + half, scratch, n - half, values);
    int32_t left = 0, right = half;
    for (int32_t i = 0; i < n; ++i) {
        if (left >= half || (right < n && values[idx[right]] > values[idx[left]])) {
            scratch[i] = idx[right++];
        } else {
            scratch[i] = idx[left++];
        }
    }
    __builtin_memcpy(idx, scratch, (uint32_t)n * 4u);
}

/* Index a goes before index b: score descending, then index ascending. */
static inline int32_t goes_before(const float *values, int32_t a, int32_t b)
{
    return values[b] < values[a] || (!(values[a] < values[b]) && a < b);
}

/* Sift heap[hole] down a heap of n whose top is the index that goes last. */
static void sift_down(int32_t *heap, int32_t n, int32_t hole, const float *values)
{
    const int32_t v = heap[hole];
    for (;;) {
        int32_t child = 2 * hole + 1;
        if (child >= n) {
            break;
        }
        if (child + 1 < n && goes_before(values, heap[child], heap[child + 1])) {
            ++child;
        }
        if (!goes_before(values, v, heap[child])) {
            break;
        }
        heap[hole] = heap[child];
        hole = child;
    }
    heap[hole] = v;
}

/* indices[0..k) = the k indices of 0..n-1 that go first, in order (a heap selection over
 * indices 0..n-1, then the heap sorted); indices holds n values. */
static void partial_sort_desc(const float *values, int32_t n, int32_t k, int32_t *indices)
{
    for (int32_t i = 0; i < n; ++i) {
        indices[i] = i;
    }
    if (k <= 0) {
        return;
    }
    for (int32_t i = k / 2 - 1; i >= 0; --i) {
        sift_down(indices, k, i, values);
    }
    for (int32_t i = k; i < n; ++i) {
        if (goes_before(values, indices[i], indices[0])) {
            const int32_t out = indices[0];
            indices[0] = indices[i];
            indices[i] = out;
            sift_down(indices, k, 0, values);
        }
    }
    for (int32_t end = k - 1; end > 0; --end) {
        const int32_t last = indices[0];
        indices[0] = indices[end];
        indices[end] = last;
        sift_down(indices, end, 0, values);
    }
}

/* ---- decoding, IoU, single-class NMS ---- */

static void decode_boxes(const mrt_detection_postprocess_params *p)
{
    const double sy = (double)mrt_fbits(p->y_scale), sx = (double)mrt_fbits(p->x_scale);
    const double sh = (double)mrt_fbits(p->h_scale), sw = (double)mrt_fbits(p->w_scale);
    for (int32_t i = 0; i < p->num_boxes; ++i) {
        const float *b = p->boxes + i * p->box_stride;      /* y, x, h, w */
        const float *a = p->anchors + i * p->anchor_stride;  /* y, x, h, w */
        const float yc = (float)((double)b[0] / sy * (double)a[2] + (double)a[0]);
        const float xc = (float)((double)b[1] / sx * (double)a[3] + (double)a[1]);
        const float half_h = (float)(0.5 * exp((double)b[2] / sh) * (double)a[2]);
        const float half_w = (float)(0.5 * exp((double)b[3] / sw) * (double)a[3]);
        float *d = p->decoded + 4 * i;                       /* ymin, xmin, ymax, xmax */
        d[0] = yc - half_h;
        d[1] = xc - half_w;
        d[2] = yc + half_h;
        d[3] = xc + half_w;
    }
}

static inline float max0(float x)
{
    return x > 0.0f ? x : 0.0f;
}

static float intersection_over_union(const float *decoded, int32_t i, int32_t j)
{
    const float *a = decoded + 4 * i, *b = decoded + 4 * j;
    const float area_i = (a[2] - a[0]) * (a[3] - a[1]);
    const float area_j = (b[2] - b[0]) * (b[3] - b[1]);
    if (area_i <= 0.0f || area_j <= 0.0f) {
        return 0.0f;
    }
    const float ymin = b[0] > a[0] ? b[0] : a[0], xmin = b[1] > a[1] ? b[1] : a[1];
    const float ymax = b[2] < a[2] ? b[2] : a[2], xmax = b[3] < a[3] ? b[3] : a[3];
    const float intersection = max0(ymax - ymin) * max0(xmax - xmin);
    return intersection / (area_i + area_j - intersection);
}

/* The boxes above the score threshold, by score, each dropped when it overlaps one kept
 * before it by more than the IoU threshold; at most max_detections into selected. */
static int32_t nms_single_class(const mrt_detection_postprocess_params *p, const float *scores,
                                int32_t max_detections, int32_t *selected, int32_t *selected_size)
{
    const int32_t n = p->num_boxes;
    const float score_threshold = mrt_fbits(p->score_threshold);
    const float iou_threshold = mrt_fbits(p->iou_threshold);
    for (int32_t i = 0; i < n; ++i) {
        const float *d = p->decoded + 4 * i;
        if (d[0] >= d[2] || d[1] >= d[3]) {
            return MRT_DETECTION_BAD_BOX;
        }
    }
    int32_t kept = 0;
    for (int32_t i = 0; i < n; ++i) {
        if (scores[i] >= score_threshold) {
            p->keep_scores[kept] = scores[i];
            p->keep_indices[kept++] = i;
        }
    }
    /* keep_indices is the merge sort's scratch, then written again (as TFLM does) */
    for (int32_t i = 0; i < kept; ++i) {
        p->sorted_indices[i] = i;
    }
    merge_sort_desc(p->sorted_indices, p->keep_indices, kept, p->keep_scores);
    for (int32_t i = 0, k = 0; i < n; ++i) {
        if (scores[i] >= score_threshold) {
            p->keep_indices[k++] = i;
        }
    }
    const int32_t output_size = kept < max_detections ? kept : max_detections;
    int32_t active = kept, count = 0;
    for (int32_t i = 0; i < kept; ++i) {
        p->active[i] = 1;
    }
    for (int32_t i = 0; i < kept; ++i) {
        if (active == 0 || count >= output_size) {
            break;
        }
        if (!p->active[i]) {
            continue;
        }
        const int32_t box = p->keep_indices[p->sorted_indices[i]];
        selected[count++] = box;
        p->active[i] = 0;
        --active;
        for (int32_t j = i + 1; j < kept; ++j) {
            if (p->active[j] &&
                intersection_over_union(p->decoded, box, p->keep_indices[p->sorted_indices[j]]) > iou_threshold) {
                p->active[j] = 0;
                --active;
            }
        }
    }
    *selected_size = count;
    return 0;
}

static void write_box(float *out, int32_t row, const float *decoded, int32_t anchor)
{
    for (int32_t k = 0; k < 4; ++k) {
        out[4 * row + k] = decoded[4 * anchor + k];
    }
}

/* ---- the two NMS paths ---- */

static int32_t regular_nms(const mrt_detection_postprocess_params *p)
{
    const int32_t ncwb = p->num_classes_with_background;
    const int32_t label_offset = ncwb - p->num_classes;
    int32_t *box_indices = p->buffer;
    float *kept_scores = p->scores_after_nms;
    int32_t size = 0;
    for (int32_t col = 0; col < p->num_classes; ++col) {
        for (int32_t row = 0; row < p->num_boxes; ++row) {
            p->score_buffer[row] = p->scores[row * ncwb + col + label_offset];
        }
        int32_t selected_size;
        const int32_t rc = nms_single_class(p, p->score_buffer, p->detections_per_class, p->selected,
                                            &selected_size);
        if (rc) {
            return rc;
        }
        int32_t count = size;
        for (int32_t i = 0; i < selected_size; ++i) {
            box_indices[count] = p->selected[i] * ncwb + col + label_offset;
            kept_scores[count++] = p->score_buffer[p->selected[i]];
        }
        const int32_t top = count < p->max_detections ? count : p->max_detections;
        partial_sort_desc(kept_scores, count, top, p->sorted_indices);
        for (int32_t row = 0; row < top; ++row) {
            const int32_t from = p->sorted_indices[row];
            p->sorted_indices[row] = box_indices[from];
            p->sorted_values[row] = kept_scores[from];
        }
        for (int32_t row = 0; row < top; ++row) {
            box_indices[row] = p->sorted_indices[row];
            kept_scores[row] = p->sorted_values[row];
        }
        size = top;
    }
    for (int32_t row = 0; row < p->max_detections; ++row) {
        if (row < size) {
            const int32_t anchor = box_indices[row] / ncwb;
            write_box(p->detection_boxes, row, p->decoded, anchor);
            p->detection_classes[row] = (float)(box_indices[row] - anchor * ncwb - label_offset);
            p->detection_scores[row] = kept_scores[row];
        } else {
            for (int32_t k = 0; k < 4; ++k) {
                p->detection_boxes[4 * row + k] = 0.0f;
            }
            p->detection_classes[row] = 0.0f;
            p->detection_scores[row] = 0.0f;
        }
    }
    p->num_detections[0] = (float)size;
    return 0;
}

static int32_t fast_nms(const mrt_detection_postprocess_params *p)
{
    const int32_t ncwb = p->num_classes_with_background, nc = p->num_classes;
    const int32_t label_offset = ncwb - nc;
    const int32_t per_anchor = p->max_classes_per_detection < nc ? p->max_classes_per_detection : nc;
    for (int32_t row = 0; row < p->num_boxes; ++row) {
        const float *box_scores = p->scores + row * ncwb + label_offset;
        int32_t *classes = p->buffer + row * nc;
        partial_sort_desc(box_scores, nc, per_anchor, classes);
        p->score_buffer[row] = box_scores[classes[0]];
    }
    int32_t selected_size;
    const int32_t rc = nms_single_class(p, p->score_buffer, p->max_detections, p->selected, &selected_size);
    if (rc) {
        return rc;
    }
    int32_t written = 0;
    for (int32_t i = 0; i < selected_size; ++i) {
        const int32_t anchor = p->selected[i];
        const float *box_scores = p->scores + anchor * ncwb + label_offset;
        const int32_t *classes = p->buffer + anchor * nc;
        for (int32_t col = 0; col < per_anchor; ++col) {
            const int32_t at = per_anchor * written + col;
            if (at >= p->output_rows) {
                return MRT_DETECTION_PAST_OUTPUTS;
            }
            write_box(p->detection_boxes, at, p->decoded, anchor);
            p->detection_classes[at] = (float)classes[col];
            p->detection_scores[at] = box_scores[classes[col]];
            ++written;
        }
    }
    p->num_detections[0] = (float)written;
    return 0;
}

int32_t mrt_detection_postprocess_f32(const mrt_detection_postprocess_params *p)
{
    decode_boxes(p);
    return p->use_regular_nms ? regular_nms(p) : fast_nms(p);
}
