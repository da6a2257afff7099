/* owner_search.cuh: the binary search that finds which nonzero of A owns a product (ESC, hySpMM). */
#ifndef NZI_SPGEMM_OWNER_SEARCH_CUH
#define NZI_SPGEMM_OWNER_SEARCH_CUH

/* Largest index in [low, high] with offsets[index] <= target (offsets non-decreasing,
 * offsets[low] <= target): the nonzero of A whose product range holds product `target`;
 * nonzeros with an empty range (an empty row of B) share their offset with the next one and
 * are skipped. O(log(high - low)). Index: int32_t (a hySpMM panel) or int64_t (ESC). */
template <typename Index>
static __device__ __forceinline__ Index owner_search(const Index *__restrict__ offsets, Index low,
                                                     Index high, Index target) {
    while (low < high) {
        const Index mid = low + (high - low + 1) / 2;
        if (offsets[mid] <= target)
            low = mid;
        else
            high = mid - 1;
    }
    return low;
}

#endif /* NZI_SPGEMM_OWNER_SEARCH_CUH */
