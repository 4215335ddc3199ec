package public

// FF1Generic exposes ff1Generic to the tests.
var FF1Generic = ff1Generic
