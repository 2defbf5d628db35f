#include "client/client.hpp"
