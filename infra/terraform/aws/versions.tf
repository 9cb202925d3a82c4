terraform {
  required_version = ">= 1.5"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # 6.29 added invoked_via_function_url, which public function URLs need since October 2025.
      version = ">= 6.29"
    }
  }
}
